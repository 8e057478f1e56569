package io.efscsi.node.handback;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Go driver's node image a handback goes back to, as far as it decides efs-utils' files: the
 * efs-utils line it builds in ({@link EfsUtilsRelease}) and the tunnel binaries {@code mount.efs}
 * finds there, which it records in each mount's state ({@code cmd}) and efs-utils' watchdog runs as
 * written.
 *
 * <p>From the Go driver's Dockerfile at each release tag, and efs-utils' spec and mount helper:
 *
 * <ul>
 *   <li>The image builds the efs-utils rpm and installs it on Amazon Linux 2 (v1.x to v2.1.0, and
 *       v2.1.4: {@code python:3.9-gcc-al2}, {@code minimal-base-python:3.9*-al2}) or Amazon Linux
 *       2023 (v2.1.1 to v2.1.3, v2.1.5 and later: {@code *-al23}).
 *   <li>The rpm puts efs-proxy in {@code %{efs_bindir}}: {@code /sbin} on Amazon Linux 2, {@code
 *       /usr/sbin} on 2023, where {@code /sbin} is a link to {@code usr/sbin}. {@code mount.efs}
 *       records what {@code which} prints on the PATH {@code /sbin:/usr/sbin:…:/usr/bin:/bin}
 *       ({@code find_command_path}): {@code /sbin/efs-proxy} on both.
 *   <li>stunnel ({@code _stunnel_bin}): {@code stunnel5} on Amazon Linux 2 (the rpm requires the
 *       {@code stunnel5} package: {@code /usr/bin/stunnel5}), {@code stunnel} elsewhere (the image
 *       copies {@code /usr/bin/stunnel}; from v2.1.5 it also links {@code stunnel5} to it).
 * </ul>
 *
 * <p>Images built otherwise (another base, a Debian package with {@code /usr/bin/efs-proxy}) are
 * what {@code --tunnel-binary} ({@code handback.tunnelBinary} in the chart) is for.
 */
public record GoDriverImage(String version, EfsUtilsRelease release, Base base) {

  /** The image's operating system, which decides where the tunnels are. */
  public enum Base {
    AL2("Amazon Linux 2"),
    AL2023("Amazon Linux 2023");

    private final String spoken;

    Base(String spoken) {
      this.spoken = spoken;
    }

    @Override
    public String toString() {
      return spoken;
    }
  }

  /** Where {@code mount.efs} finds efs-proxy in every Go driver image (2.x and 3.x). */
  public static final String EFS_PROXY = "/sbin/efs-proxy";

  private static final Pattern VERSION =
      Pattern.compile("v?([0-9]+)\\.([0-9]+)(?:\\.([0-9]+))?([-+].*)?");

  /**
   * The image of Go driver release {@code version} ({@code v3.4.1}, {@code 2.1.4}).
   *
   * @throws IllegalArgumentException naming the value when it is no such release
   */
  public static GoDriverImage of(String version) {
    EfsUtilsRelease release = EfsUtilsRelease.ofGoDriver(version);
    Matcher m = VERSION.matcher(version.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "--go-driver must be the Go driver's release (as v3.4.1), got '" + version + "'");
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    int patch = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
    boolean al2 =
        major == 1
            || (major == 2 && minor == 0)
            || (major == 2 && minor == 1 && (patch == 0 || patch == 4));
    return new GoDriverImage(version.strip(), release, al2 ? Base.AL2 : Base.AL2023);
  }

  /**
   * What this release's node pod renders as efs-utils.conf by default, as far as a tunnel config
   * reads it: {@code [cloudwatch-log] enabled = false} from v3.1.0 on, commented out before.
   */
  public EfsUtilsConf renderedConf() {
    Matcher m = VERSION.matcher(version);
    boolean from31 =
        m.matches()
            && (Integer.parseInt(m.group(1)) > 3
                || (Integer.parseInt(m.group(1)) == 3 && Integer.parseInt(m.group(2)) >= 1));
    return from31 ? EfsUtilsConf.GO_DRIVER : EfsUtilsConf.GO_DRIVER_BEFORE_3_1;
  }

  /** The stunnel {@code mount.efs} records in this image. */
  public String stunnel() {
    return base == Base.AL2 ? "/usr/bin/stunnel5" : "/usr/bin/stunnel";
  }

  /** The tunnel binary of the line's own mode: efs-proxy for 2.x and 3.x, stunnel for 1.3x. */
  public String tunnel() {
    return release.efsProxy() ? EFS_PROXY : stunnel();
  }

  /** Why {@link #tunnel()}: the operator's answer to "why this path?" in the plan. */
  public String why() {
    return release.efsProxy()
        ? "the Go driver "
            + version
            + "'s image is "
            + base
            + ": the efs-utils rpm puts efs-proxy in "
            + (base == Base.AL2 ? "/sbin" : "/usr/sbin (/sbin links to it)")
            + ", and mount.efs records the first PATH entry that has it"
        : "the Go driver "
            + version
            + "'s image is "
            + base
            + ": mount.efs records "
            + (base == Base.AL2
                ? "stunnel5 there (the rpm requires the stunnel5 package)"
                : "stunnel there")
            + ", found at /usr/bin";
  }

  /** {@code the Go driver v3.4.1 (efs-utils 3.x, Amazon Linux 2023)} */
  public String describe() {
    return "the Go driver " + version + " (" + release.describe() + ", " + base + ")";
  }
}

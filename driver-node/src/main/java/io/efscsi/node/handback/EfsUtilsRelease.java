package io.efscsi.node.handback;

import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The efs-utils release line a Go driver release ships, which decides the files a handback writes:
 * the tunnel efs-utils' watchdog starts ({@code cmd}), the tunnel config's keys and the state's
 * fields. Read from efs-utils' {@code write_stunnel_config_file} and {@code
 * write_tunnel_state_file} of each line, and from the Go driver's changelogs for which line each of
 * its releases builds in.
 */
public enum EfsUtilsRelease {
  /** efs-utils 1.3x (Go driver 1.x): stunnel 5, no partition binding; TLS mounts only. */
  V1("1.3x", "stunnel", BindProtocol.NONE),
  /** efs-utils 2.x (Go driver 2.x): efs-proxy, BindClientToPartition program 100200. */
  V2("2.x", "efs-proxy", BindProtocol.EFS_V2),
  /** efs-utils 3.x (Go driver 3.x): efs-proxy, program 400123, {@code service_type} recorded. */
  V3("3.x", "efs-proxy", BindProtocol.AWSFILE_V3);

  /**
   * The {@code efs_utils_version} efs-utils 3.x writes into the tunnel config: its {@code VERSION}.
   * The Go driver's image builds efs-utils' newest tag at build time; 3.2.0 is the newest 3.x
   * release (../shared/efs-utils). The watchdog does not read it.
   */
  public static final String V3_VERSION = "3.2.0";

  private static final Pattern GO_VERSION = Pattern.compile("v?([0-9]+)\\.[0-9]+(\\.[0-9]+)?.*");

  private final String line;
  private final String tunnel;
  private final BindProtocol bind;

  EfsUtilsRelease(String line, String tunnel, BindProtocol bind) {
    this.line = line;
    this.tunnel = tunnel;
    this.bind = bind;
  }

  /** {@code efs-utils 3.x} */
  public String describe() {
    return "efs-utils " + line;
  }

  /** {@code stunnel} or {@code efs-proxy}. */
  public String tunnel() {
    return tunnel;
  }

  public boolean efsProxy() {
    return this != V1;
  }

  /** The binding the tunnel speaks: what a takeover of it speaks again. */
  public BindProtocol bind() {
    return bind;
  }

  /**
   * The line a Go driver release ships ({@code v3.4.1}, {@code 2.1.15}): 1.x → 1.3x, 2.x → 2.x, 3.x
   * → 3.x.
   *
   * @throws IllegalArgumentException naming the value when it is not such a version
   */
  public static EfsUtilsRelease ofGoDriver(String version) {
    Matcher m = GO_VERSION.matcher(version.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "--go-driver must be the Go driver's release (as v3.4.1), got '" + version + "'");
    }
    return switch (m.group(1)) {
      case "1" -> V1;
      case "2" -> V2;
      case "3" -> V3;
      default ->
          throw new IllegalArgumentException(
              "--go-driver "
                  + version
                  + " is not a release this handback knows (1.x, 2.x or 3.x: efs-utils 1.3x, 2.x,"
                  + " 3.x)");
    };
  }
}

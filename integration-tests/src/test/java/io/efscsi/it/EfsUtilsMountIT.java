package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.handback.GoDriverImage;
import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.takeover.EfsUtilsState;
import io.efscsi.node.takeover.EfsUtilsStateParser;
import io.efscsi.proxy.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Both directions of the migration met by genuine files: efs-utils' own {@code mount.efs} of each
 * release line (../shared/efs-utils, unpacked here, run unmodified) mounts a TLS volume in a
 * throwaway mount and pid namespace laid out as the Go driver's image of that line (Amazon Linux 2
 * or 2023: {@code /etc/system-release}, efs-proxy only under {@code /usr/sbin} with {@code /sbin} a
 * link to it, stunnel as {@code /usr/bin/stunnel5} on 2), with the Go driver's efs-utils.conf
 * (region and one port set, CloudWatch logs off as v3.1.0 on renders it) where it links {@code
 * /etc/amazon/efs}. Stand-ins only for what cannot run here: {@code mount.nfs4} (records its
 * arguments), efs-proxy (records how it was started) and the mount target's DNS name (in {@code
 * /etc/hosts}); stunnel is real. The pid namespace ends every tunnel with the run.
 *
 * <p>Then: our takeover reads the state and tunnel config mount.efs wrote (file system, port, TLS,
 * access point, tunnel and its binding, the recorded command); and the handback, writing for the
 * same Go driver release what mount.efs would have left for one of our own volumes on the same
 * mount point and port, writes that tunnel config line for line and that state field for field (but
 * the pid, which the watchdog records, the times and the host's name).
 */
class EfsUtilsMountIT {

  private static final int PORT = 20449;
  private static final String AP = "fsap-0123456789abcdef0";

  @TempDir static Path unpacked;

  @TempDir Path t;

  @BeforeAll
  static void unpack() throws Exception {
    EfsUtilsReleases.unpack(unpacked, EfsUtilsReleases.ALL.toArray(String[]::new));
  }

  @ParameterizedTest(name = "efs-utils {0} in the Go driver {1}''s image, -o {2}")
  @CsvSource({
    "1.36.0, v1.7.7, tls",
    "2.4.2, v2.1.4, tls",
    "2.4.2, v2.1.15, 'tls,accesspoint=" + AP + "'",
    "2.4.2, v2.1.15, 'tls,stunnel'",
    "3.2.0, v3.4.1, 'tls,accesspoint=" + AP + "'",
    "3.2.0, v3.4.1, 'tls,stunnel'"
  })
  void theTakeoverReadsWhatMountEfsWroteAndTheHandbackWritesWhatItWould(
      String efsUtils, String goDriver, String options) throws Exception {
    GoDriverImage image = GoDriverImage.of(goDriver);
    Path mountPoint = Files.createDirectories(t.resolve("kubelet/pods/p1/volumes/pv-1/mount"));
    Made made = mountEfs(efsUtils, image, mountPoint, options);

    // the takeover's reading of the genuine files
    EfsUtilsState s = EfsUtilsStateParser.parse(made.stem(), made.state(), made.config());
    boolean stunnel = !image.release().efsProxy() || options.contains("stunnel");
    Optional<String> ap = options.contains(AP) ? Optional.of(AP) : Optional.empty();
    assertEquals(OurTlsVolume.FS, s.fileSystemId());
    assertEquals(PORT, s.port());
    assertEquals(mountPoint.toString(), s.mountPoint());
    assertEquals(OurTlsVolume.DNS, s.upstreamHost());
    assertEquals(2049, s.upstreamPort());
    assertTrue(s.tls());
    assertEquals(Optional.of(OurTlsVolume.DNS), s.checkHost());
    assertEquals(OptionalInt.of(2), s.verifyLevel());
    assertEquals(Optional.of("/etc/amazon/efs/efs-utils.crt"), s.caFile());
    assertEquals(ap, s.accessPointId());
    assertEquals(false, s.iam());
    assertEquals(Optional.of("us-east-1"), s.region());
    assertEquals(
        stunnel
            ? EfsUtilsState.Tunnel.STUNNEL
            : image.release() == io.efscsi.node.handback.EfsUtilsRelease.V3
                ? EfsUtilsState.Tunnel.EFS_PROXY_V3
                : EfsUtilsState.Tunnel.EFS_PROXY_V2,
        s.tunnel());
    List<?> cmd = (List<?>) made.json().get("cmd");
    assertEquals(cmd, s.command(), "the command a handback gives back");
    assertEquals(stunnel ? image.stunnel() : GoDriverImage.EFS_PROXY, cmd.getFirst());
    assertEquals(((Number) made.json().get("pid")).longValue(), s.tunnelPid(), "the tunnel's pid");
    if (stunnel) {
      return; // our own volumes go back in the line's own mode (efs-proxy on 2.x and 3.x)
    }

    // the handback of one of our volumes on the same mount point and port, for the same release
    EfsUtilsDirs dirs =
        new EfsUtilsDirs(
            Files.createDirectories(t.resolve("handback/var-run-efs")),
            made.configDir(),
            Files.createDirectories(t.resolve("handback/legacy")));
    Handed h =
        OurTlsVolume.handBack(
            t.resolve("handback/efs-csi"),
            dirs,
            image,
            Optional.empty(),
            PORT,
            mountPoint.toString(),
            ap);
    assertEquals(made.stem(), h.stem(), "efs-utils' name for the mount");
    assertEquals(
        made.config(),
        Files.readString(dirs.stateDir().resolve("stunnel-config." + h.stem())),
        "the tunnel config, line for line as mount.efs " + efsUtils + " wrote it");
    Map<String, Object> written = fields(Files.readString(dirs.stateDir().resolve(h.stem())));
    Map<String, Object> theirs = fields(made.state());
    assertEquals(List.copyOf(theirs.keySet()), List.copyOf(written.keySet()), "field order");
    assertEquals(theirs, written, "the state, field for field");
  }

  /** What mount.efs left: its state file's stem and text, the tunnel config, its config dir. */
  private record Made(String stem, String state, String config, Path configDir) {
    Map<?, ?> json() {
      return (Map<?, ?>) Json.parse(state.strip());
    }
  }

  /** The state's fields but those that differ by time, host and process. */
  private static Map<String, Object> fields(String state) {
    Map<String, Object> m = new LinkedHashMap<>();
    ((Map<?, ?>) Json.parse(state.strip())).forEach((k, v) -> m.put(String.valueOf(k), v));
    for (String k : List.of("pid", "mount_time", "certificateCreationTime", "commonName")) {
      assertTrue(k.equals("pid") || m.containsKey(k), k + " recorded: " + state);
      m.remove(k);
    }
    return m;
  }

  /** Runs mount.efs of {@code version} in a namespace laid out as {@code image}. */
  private Made mountEfs(String version, GoDriverImage image, Path mountPoint, String options)
      throws Exception {
    Path src = unpacked.resolve("efs-utils-v" + version);
    Path conf = Files.createDirectories(t.resolve("etc-amazon-efs"));
    Path runEfs = Files.createDirectories(t.resolve("var-run-efs"));
    Files.createDirectories(t.resolve("log/amazon/efs"));
    Path sbin = Files.createDirectories(t.resolve("layout/usr-sbin"));
    Path bin = Files.createDirectories(t.resolve("layout/usr-bin"));
    Path etc = Files.createDirectories(t.resolve("layout/etc/amazon/efs")).getParent().getParent();
    // the Go driver's efs-utils.conf as its pod renders it: the region (it has no instance
    // metadata here), one port, and v3.1.0's CloudWatch logs flag, off
    String text = Files.readString(src.resolve("dist/efs-utils.conf"));
    text =
        text.replace("#region = us-east-1", "region = us-east-1")
            .replaceFirst("port_range_lower_bound = \\d+", "port_range_lower_bound = " + PORT)
            .replaceFirst(
                "port_range_upper_bound = \\d+", "port_range_upper_bound = " + (PORT + 1));
    if (image.renderedConf().bool("cloudwatch-log", "enabled").isPresent()) {
      text = text.replace("# enabled = true", "enabled = false");
    }
    Files.writeString(conf.resolve("efs-utils.conf"), text, StandardCharsets.UTF_8);
    Files.copy(src.resolve("dist/efs-utils.crt"), conf.resolve("efs-utils.crt"));
    Files.writeString(
        etc.resolve("system-release"),
        image.base() == GoDriverImage.Base.AL2
            ? "Amazon Linux release 2 (Karoo)\n"
            : "Amazon Linux release 2023.6.20241212 (Amazon Linux)\n");
    Files.writeString(
        etc.resolve("hosts"), "127.0.0.1 localhost\n127.0.0.1 " + OurTlsVolume.DNS + "\n");
    EfsUtilsReleases.executable(
        sbin.resolve("mount.nfs4"),
        "#!/bin/sh\necho \"$0 $*\" >>'" + t.resolve("nfs-argv") + "'\n");
    EfsUtilsReleases.executable(
        sbin.resolve("efs-proxy"),
        "#!/bin/sh\n# efs-proxy's stand-in: records how it was started, runs until the namespace"
            + " ends\necho \"$0 $*\" >>'"
            + t.resolve("tunnel-argv")
            + "'\nexec sleep 600\n");
    if (image.base() == GoDriverImage.Base.AL2) {
      // Amazon Linux 2's stunnel5 package: stunnel 5 under that name (Debian's stunnel is 5.x)
      Files.createSymbolicLink(bin.resolve("stunnel5"), Path.of("/usr/bin/stunnel4"));
    }
    Path ns = t.resolve("ns.sh");
    Files.writeString(
        ns,
        """
        set -eu
        T='%1$s' SRC='%2$s'
        mount -t overlay overlay -o "lowerdir=$T/layout/usr-sbin:/usr/sbin" /usr/sbin
        mount -t overlay overlay -o "lowerdir=$T/layout/usr-bin:/usr/bin" /usr/bin
        mount -t overlay overlay -o "lowerdir=$T/layout/etc:/etc" /etc
        mount --bind "$T/etc-amazon-efs" /etc/amazon/efs
        mount --bind "$T/log" /var/log
        mount -t tmpfs tmpfs /run
        mkdir /run/efs
        mount --bind "$T/var-run-efs" /run/efs
        cd "$SRC"
        PYTHONPATH="$SRC/src" python3 src/mount_efs/__init__.py %3$s:/ '%4$s' -o '%5$s'
        """
            .formatted(t, src, OurTlsVolume.FS, mountPoint, options),
        StandardCharsets.UTF_8);
    Process p =
        new ProcessBuilder(
                "unshare",
                "--mount",
                "--pid",
                "--fork",
                "--propagation",
                "private",
                "bash",
                ns.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("mount.efs did not finish in 120 s:\n" + out);
    }
    String log = readOr(t.resolve("log/amazon/efs/mount.log"));
    assertEquals(0, p.exitValue(), "mount.efs " + version + ":\n" + out + "\n" + log);
    String nfs = readOr(t.resolve("nfs-argv"));
    assertTrue(
        nfs.startsWith("/sbin/mount.nfs4 127.0.0.1:/ " + mountPoint + " -o ")
            && nfs.contains(",port=" + PORT),
        "mount.nfs4 through the tunnel's port: " + nfs + "\n" + log);
    String stem =
        OurTlsVolume.FS + "." + mountPoint.toString().replace('/', '.').substring(1) + "." + PORT;
    return new Made(
        stem,
        Files.readString(runEfs.resolve(stem)),
        Files.readString(runEfs.resolve("stunnel-config." + stem)),
        conf);
  }

  private static String readOr(Path p) throws IOException {
    return Files.exists(p) ? Files.readString(p) : "(no " + p.getFileName() + ")";
  }
}

package io.efscsi.node;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import io.efscsi.node.handback.EfsUtilsFiles;
import io.efscsi.node.handback.GoDriverImage;
import io.efscsi.node.handback.Handback;
import io.efscsi.node.handback.HandbackPlanner;
import io.efscsi.node.iam.IssuedCertificates;
import io.efscsi.node.iam.SdkCredentialsProviders;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.supervisor.Handoff;
import io.efscsi.supervisor.host.ProcMountTable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The wiring of {@code efs-csi handback} on this host's real adapters (the work is in {@link
 * io.efscsi.node.handback}): {@code efs-csi handback --go-driver VERSION [--dry-run] [--go-on]
 * [--wait 30m] …}: hands every mount our proxies serve on this node back to the Go driver's
 * efs-utils (docs/migration.md, "Rollback without draining"). {@code --dry-run} prints the plan and
 * writes nothing (it runs in the node pod); the handback itself runs in the handback pod the chart
 * renders for one node, which outlives the node pod. Exit codes: 0 every mount handed back (or
 * could be, for a dry run), 1 some not (the reasons are printed), 2 bad flags.
 */
public final class HandbackCommand {

  public static final List<Flag> FLAGS =
      List.of(
          Flag.string(
              "go-driver",
              "",
              "the Go driver release rolled back to (v3.4.1): decides the efs-utils line (1.3x,"
                  + " 2.x, 3.x) whose files are written"),
          Flag.bool("dry-run", false, "print the plan, write nothing"),
          Flag.bool(
              "go-on",
              false,
              "hand back what can be even when some mounts cannot (those stay on our proxies)"),
          Flag.duration(
              "wait",
              "30m",
              "how long to wait for our node plugin to go and the Go driver to come"),
          Flag.string(
              "state-dir",
              "",
              "our state dir (default: $EFS_CSI_STATE_DIR, else /var/run/efs-csi)"),
          Flag.string(
              "efs-utils-state-dir", EfsUtilsDirs.RECORDED_STATE_DIR, "efs-utils' state dir here"),
          Flag.string(
              "efs-utils-config-dir-path",
              "/var/amazon/efs",
              "the host's /var/amazon/efs here (where the Go driver keeps efs-utils' config)"),
          Flag.string(
              "efs-utils-config-legacy-dir-path",
              "/etc/amazon/efs-legacy",
              "the host's /etc/amazon/efs here"),
          Flag.string("mountinfo", ProcMountTable.SELF.toString(), "the mount table to read"),
          Flag.string("region", "", "the node's region, for mounts whose region is not recorded"),
          Flag.string(
              "tunnel-binary",
              "",
              "the tunnel our own mounts get in the Go driver's image, for images built otherwise"
                  + " (default: where mount.efs finds it in that release's image: /sbin/efs-proxy"
                  + " for 2.x and 3.x, /usr/bin/stunnel5 for 1.x); taken-over mounts get back the"
                  + " command efs-utils recorded"));

  private HandbackCommand() {}

  public static int run(List<String> args, PrintStream out, PrintStream err) {
    return run(args, System.getenv(), out, err);
  }

  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    Flags flags;
    GoDriverImage image;
    Optional<String> binary;
    try {
      flags = new FlagSet().addAll(FLAGS).parse(args);
      if (flags.string("go-driver").isBlank()) {
        throw new UsageException(
            "handback needs --go-driver, the Go driver release rolled back to (as v3.4.1)");
      }
      image = GoDriverImage.of(flags.string("go-driver"));
      binary = Optional.of(flags.string("tunnel-binary").strip()).filter(b -> !b.isEmpty());
      if (binary.isPresent() && !binary.get().startsWith("/")) {
        throw new UsageException(
            "--tunnel-binary must be an absolute path, as efs-utils' watchdog runs it, got '"
                + binary.get()
                + "'");
      }
    } catch (UsageException e) {
      return e.report(err);
    } catch (IllegalArgumentException e) {
      return new UsageException(e.getMessage()).report(err);
    }
    String stateFlag = flags.string("state-dir").strip();
    String fromEnv = env.getOrDefault("EFS_CSI_STATE_DIR", "");
    Path stateDir =
        Path.of(
            !stateFlag.isEmpty() ? stateFlag : !fromEnv.isBlank() ? fromEnv : "/var/run/efs-csi");
    EfsUtilsDirs dirs =
        new EfsUtilsDirs(
            Path.of(flags.string("efs-utils-state-dir")),
            Path.of(flags.string("efs-utils-config-dir-path")),
            Path.of(flags.string("efs-utils-config-legacy-dir-path")));
    Optional<String> region = Optional.of(flags.string("region").strip()).filter(r -> !r.isEmpty());
    boolean dryRun = flags.bool("dry-run");
    String stsRegion =
        region.orElse(
            env.getOrDefault("AWS_REGION", env.getOrDefault("AWS_DEFAULT_REGION", "us-east-1")));
    try (SdkCredentialsProviders credentials = HostAdapters.credentials().apply(stsRegion)) {
      Handback handback =
          new Handback(
              new HandbackPlanner(image, binary, dirs, env, region),
              new EfsUtilsFiles(
                  image.release(),
                  dirs,
                  IssuedCertificates.issuer(credentials, Clock.systemUTC()),
                  stateDir,
                  IssuedCertificates.commonName(),
                  Clock.systemUTC(),
                  image.renderedConf()),
              // a dry run only reads: not even an unreadable record is moved aside
              dryRun ? Handoff.reading(stateDir) : Handoff.of(stateDir),
              HostAdapters.mountTable(Path.of(flags.string("mountinfo"))),
              new Handback.Timing(
                  flags.duration("wait"),
                  Duration.ofMillis(100),
                  Handback.Timing.DEFAULT.listenWait(),
                  Handback.Timing.DEFAULT.reconnectWait()),
              out);
      int code = dryRun ? handback.dryRun() : handback.run(flags.bool("go-on"));
      out.flush();
      return code;
    } catch (IOException e) {
      err.println("efs-csi handback: " + e.getMessage());
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("efs-csi handback: interrupted");
      return 1;
    }
  }
}

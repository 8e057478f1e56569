package io.efscsi.launcher;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.DriverRuntime;
import io.efscsi.common.Plugin;
import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.MetricsAuth;
import io.efscsi.common.config.UsageException;
import io.efscsi.common.http.auth.AccessReviewer;
import io.efscsi.controller.ControllerOptions;
import io.efscsi.controller.ControllerPlugin;
import io.efscsi.controller.provision.DirectoryRemover;
import io.efscsi.node.NodeOptions;
import io.efscsi.node.NodePlugin;
import io.efscsi.node.cleanup.DirectoryCleanup;
import io.efscsi.proxy.json.Json;
import io.efscsi.proxy.util.Signals;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code efs-csi controller|node|all|status|preflight|handback|version [flags]}. With no command
 * the Go driver's behaviour is kept (one process serving every service), so its manifests' args
 * keep working. Exit codes: 0 done, 1 failed at run time, 2 bad command line. {@code bin/efs-csi}
 * runs {@code proxy} on the proxy's own class path, and {@code demo}, {@code benchmark-controller},
 * {@code aot-training} and {@code lab} in the demo module ({@code io.efscsi.demo.DemoMain}, {@code
 * lib/demo/}), which this class never sees; the usage below lists them all, as {@code bin/efs-csi}
 * accepts them.
 */
public final class Main {

  static final String COMMANDS =
      "controller, node, all, proxy, demo, benchmark-controller, lab, status, preflight, handback,"
          + " version";

  /** What {@link #run} dispatches: the usage's commands and the build's aot-training. */
  private static final List<String> DISPATCHED =
      java.util.stream.Stream.concat(
              java.util.Arrays.stream(COMMANDS.split(",\\s*")),
              java.util.stream.Stream.of("aot-training"))
          .toList();

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(List.of(args), System.out, System.err, System.getenv()));
  }

  enum Mode {
    CONTROLLER,
    NODE,
    ALL
  }

  static int run(List<String> args, PrintStream out, PrintStream err, Map<String, String> env) {
    String command = "all";
    List<String> rest = args;
    if (!args.isEmpty() && !args.getFirst().startsWith("-")) {
      command = args.getFirst();
      rest = args.subList(1, args.size());
    }
    FlagSet flagSet = flagSet();
    try {
      boolean helpWord = List.of("help", "-h", "--help", "-help").contains(command);
      if (!helpWord && !DISPATCHED.contains(command)) {
        // also with --help: a mistyped command is a bad command line, not a request for help
        throw new UsageException(
            "unknown command '" + command + "'; accepted commands: " + COMMANDS);
      }
      if (helpWord || rest.contains("--help") || rest.contains("-h")) {
        out.println(usage(flagSet));
        return 0;
      }
      return switch (command) {
        case "version" -> {
          out.print(versionJson(BuildInfo.load()));
          yield 0;
        }
        case "controller" -> serve(Mode.CONTROLLER, flagSet.parse(rest), env, out, err);
        case "node" -> serve(Mode.NODE, flagSet.parse(rest), env, out, err);
        case "all" -> serve(Mode.ALL, flagSet.parse(rest), env, out, err);
        case "demo", "benchmark-controller", "aot-training", "lab" ->
            throw new UsageException(
                command
                    + " runs through bin/efs-csi "
                    + command
                    + ", with the demo module (lib/demo/) on its class path");
        case "status" -> {
          Logging.quiet();
          yield io.efscsi.node.status.StatusCommand.run(rest, out, err);
        }
        case "handback" -> {
          Logging.quiet();
          yield io.efscsi.node.HandbackCommand.run(rest, out, err);
        }
        case "preflight" -> {
          Logging.quiet();
          yield io.efscsi.launcher.preflight.PreflightCommand.run(rest, env, out, err);
        }
        case "proxy" ->
            throw new UsageException(
                "the proxy runs through bin/efs-csi proxy, on its own minimal classpath");
        default -> throw new IllegalStateException("command " + command + " not dispatched");
      };
    } catch (UsageException e) {
      return e.report(err);
    }
  }

  /**
   * The Go driver's {@code --version} JSON shape (driverVersion, gitCommit, buildDate,
   * efsClientSource, goVersion → javaVersion, compiler, platform), pretty-printed by the shared
   * {@link Json}.
   */
  static String versionJson(BuildInfo build) {
    String os = System.getProperty("os.name", "linux").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "amd64");
    arch = arch.equals("x86_64") ? "amd64" : arch.equals("aarch64") ? "arm64" : arch;
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("driverVersion", build.version());
    fields.put("gitCommit", build.gitCommit());
    fields.put("buildDate", build.buildDate());
    fields.put("efsClientSource", "efs-csi-java proxy (built in)");
    fields.put("javaVersion", Runtime.version().toString());
    fields.put("compiler", "javac");
    fields.put("platform", os + "/" + arch);
    return Json.write(fields);
  }

  static FlagSet flagSet() {
    return new FlagSet()
        .addAll(CommonOptions.FLAGS)
        .addAll(ControllerOptions.FLAGS)
        .addAll(NodeOptions.FLAGS);
  }

  private static int serve(
      Mode mode, Flags flags, Map<String, String> env, PrintStream out, PrintStream err)
      throws UsageException {
    if (flags.bool("version")) {
      out.print(versionJson(BuildInfo.load()));
      return 0;
    }
    CommonOptions common = CommonOptions.from(flags);
    List<Plugin> plugins = new ArrayList<>();
    Optional<DirectoryCleanup> cleanup = Optional.empty();
    if (mode != Mode.NODE) {
      ControllerOptions controller = ControllerOptions.from(flags);
      if (controller.deleteAccessPointRootDir()) {
        // Root directories are removed (or archived, as a volume's onDelete says) through the
        // node's mount path: a proxy and an NFS mount. Only with the flag: it needs privileges.
        cleanup = Optional.of(NodePlugin.directoryCleanup(NodeOptions.from(flags)));
      }
      plugins.add(new ControllerPlugin(controller, env, cleanup.map(Main::remover)));
    }
    if (mode != Mode.CONTROLLER) {
      plugins.add(new NodePlugin(NodeOptions.from(flags), env));
    }
    Logging.configure(common.verbosity());
    Logger log = LoggerFactory.getLogger(Main.class);
    CommonOptions.klogWarnings(flags).forEach(log::warn);
    // Trap SIGTERM before the socket exists, so a stop that arrives during start-up is graceful.
    CountDownLatch stopRequested = new CountDownLatch(1);
    boolean trapped =
        Signals.onTermination(signal -> {
          log.info("received SIG{}, shutting down", signal);
          stopRequested.countDown();
        });
    // --metrics-auth=kubernetes: /metrics requests are reviewed by the API server.
    Optional<KubernetesAccessReviewer> reviewer =
        common.metricsAuth() == MetricsAuth.KUBERNETES
            ? Optional.of(KubernetesAccessReviewer.inCluster(env))
            : Optional.empty();
    if (reviewer.isPresent() && !env.containsKey("KUBERNETES_SERVICE_HOST")) {
      log.warn(
          "--metrics-auth=kubernetes outside a cluster (KUBERNETES_SERVICE_HOST is not set):"
              + " /metrics answers 503");
    }
    DriverRuntime runtime;
    try {
      runtime =
          DriverRuntime.start(
              common, BuildInfo.load(), plugins, reviewer.map(AccessReviewer.class::cast));
    } catch (Exception e) {
      log.error("cannot start: {}", e.getMessage(), e);
      err.println("efs-csi: cannot start: " + e.getMessage());
      reviewer.ifPresent(KubernetesAccessReviewer::close);
      return 1;
    }
    if (!trapped) {
      Runtime.getRuntime().addShutdownHook(new Thread(runtime::close, "shutdown"));
    }
    try {
      stopRequested.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    runtime.close();
    reviewer.ifPresent(KubernetesAccessReviewer::close);
    cleanup.ifPresent(DirectoryCleanup::close);
    return 0;
  }

  /** The controller's DirectoryRemover port on the node's mount path. */
  private static DirectoryRemover remover(DirectoryCleanup c) {
    return new DirectoryRemover() {
      @Override
      public boolean remove(Target t) {
        return c.remove(
            t.region(), t.fileSystemId(), t.mountTargetIp(), t.accessPointId(), t.path());
      }

      @Override
      public Optional<String> archive(Target t) {
        return c.archive(
            t.region(), t.fileSystemId(), t.mountTargetIp(), t.accessPointId(), t.path());
      }
    };
  }

  static String usage(FlagSet flags) {
    return """
    usage: efs-csi <command> [flags]

    commands:
      controller   serve the CSI Identity and Controller services
      node         serve the CSI Identity and Node services
      all          both in one process (the default when no command is given, as the Go driver)
      proxy        run one per-mount proxy (started by the node plugin)
      demo, benchmark-controller, lab
                   the demo module's commands (lib/demo/), against the embedded EFS emulator:
                   one volume's life on this node with a proxy killed and healed (needs root and
                   nfs-ganesha), the controller's CreateVolume/DeleteVolume timed, the loopback
                   NFS server the tests, the demo and the benchmarks share; 'efs-csi demo --help'
                   says more
      status [--json] [--state-dir DIR]
                   the node's volumes, proxies and mounts (run inside the node pod); read-only
      preflight [--kubeconfig FILE] [--region R]
                   before switching from the Go driver: every StorageClass and PersistentVolume
                   of efs.csi.aws.com read as this driver reads them (exit 1 if one would break)
      preflight node [--host-root DIR] [--mountinfo FILE]
                   on a node (kubectl debug node/<node>): each Go-driver mount as the takeover
                   would take it
      handback --go-driver VERSION [--dry-run] [--go-on] [--wait 30m] [--tunnel-binary PATH]
                   a rollback without draining: this node's mounts handed back to the Go
                   driver's efs-utils on their ports (docs/migration.md); --dry-run writes nothing
      version      print the version as JSON

    flags (the Go driver's names; unknown flags are refused with exit code 2):
    """
        + flags.usage();
  }
}

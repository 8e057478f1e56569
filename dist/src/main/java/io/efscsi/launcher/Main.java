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
import io.efscsi.proxy.util.Signals;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code efs-csi controller|node|all|demo|version [flags]}. With no command the Go driver's
 * behaviour is kept (one process serving every service), so its manifests' args keep working. Exit
 * codes: 0 done, 1 failed at run time, 2 bad command line.
 */
public final class Main {

  static final String COMMANDS =
      "controller, node, all, proxy, demo, benchmark-controller, status, version";

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
      if (List.of("help", "-h", "--help", "-help").contains(command)
          || rest.contains("--help")
          || rest.contains("-h")) {
        out.println(usage(flagSet));
        return 0;
      }
      return switch (command) {
        case "version" -> {
          out.println(BuildInfo.load().toJson());
          yield 0;
        }
        case "controller" -> serve(Mode.CONTROLLER, flagSet.parse(rest), env, out, err);
        case "node" -> serve(Mode.NODE, flagSet.parse(rest), env, out, err);
        case "all" -> serve(Mode.ALL, flagSet.parse(rest), env, out, err);
        case "demo" -> Demo.run(rest, out, err);
        case "aot-training" -> AotTraining.run(rest, err);
        case "benchmark-controller" -> benchmark(rest, out, err);
        case "status" -> {
          Logging.quiet();
          yield io.efscsi.node.status.StatusCommand.run(rest, out, err);
        }
        case "proxy" ->
            throw new UsageException(
                "the proxy runs through bin/efs-csi proxy, on its own minimal classpath");
        default ->
            throw new UsageException(
                "unknown command '" + command + "'; accepted commands: " + COMMANDS);
      };
    } catch (UsageException e) {
      err.println("efs-csi: " + e.getMessage());
      err.println("run 'efs-csi --help' for the list of commands and flags");
      return 2;
    }
  }

  private static int benchmark(List<String> args, PrintStream out, PrintStream err)
      throws UsageException {
    if (args.size() > 1 || (!args.isEmpty() && !args.getFirst().matches("[1-9][0-9]{0,5}"))) {
      throw new UsageException(
          "benchmark-controller takes one optional argument, the number of volumes (1-999999),"
              + " got "
              + args);
    }
    Logging.quiet();
    try {
      return ControllerBenchmark.run(args, out);
    } catch (Exception e) {
      err.println("efs-csi benchmark-controller failed: " + e);
      return 1;
    }
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
      out.println(BuildInfo.load().toJson());
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
      demo [--quiet|--json] [--log FILE]
                   one volume's life on this node: the driver in 'all' mode on a temporary
                   socket, the EFS emulator with a mount target (TLS, nfs-ganesha) on 127.0.0.1,
                   a proxy killed mid-transfer and healed; needs root and nfs-ganesha
      benchmark-controller [volumes]
                   time CreateVolume/DeleteVolume of a packaged controller against the embedded
                   EFS emulator, on file systems with 100, 1,000 and 10,000 access points
                   (default 1000 volumes each)
      status [--json] [--state-dir DIR]
                   the node's volumes, proxies and mounts (run inside the node pod); read-only
      version      print the version as JSON

    flags (the Go driver's names; unknown flags are refused with exit code 2):
    """
        + flags.usage();
  }
}

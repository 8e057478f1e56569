package io.efscsi.demo;

import io.efscsi.common.config.UsageException;
import java.io.PrintStream;
import java.util.List;

/**
 * {@code efs-csi demo|benchmark-controller|aot-training|lab …}: the commands that drive the driver
 * against the EFS emulator rather than serve. {@code bin/efs-csi} runs them with {@code lib/demo/}
 * (this module and the emulator) after the product's {@code lib/} on the class path; the launcher
 * ({@code io.efscsi.launcher.Main}) never sees them. Exit codes as the launcher's: 0 done, 1 failed
 * at run time, 2 bad command line.
 */
public final class DemoMain {

  static final String COMMANDS = "demo, benchmark-controller, aot-training, lab";

  private DemoMain() {}

  public static void main(String[] args) {
    System.exit(run(List.of(args), System.out, System.err));
  }

  static int run(List<String> args, PrintStream out, PrintStream err) {
    String command = args.isEmpty() ? "" : args.getFirst();
    List<String> rest = args.isEmpty() ? List.of() : args.subList(1, args.size());
    try {
      if (rest.contains("--help") || rest.contains("-h")) {
        out.println(USAGE);
        return 0;
      }
      return switch (command) {
        case "demo" -> Demo.run(rest, out, err);
        case "aot-training" -> AotTraining.run(rest, err);
        case "benchmark-controller" -> benchmark(rest, out, err);
        case "lab" -> LabCommand.run(rest, System.in, out, err);
        default ->
            throw new UsageException(
                "unknown command '" + command + "'; accepted commands here: " + COMMANDS);
      };
    } catch (UsageException e) {
      return e.report(err);
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
    DemoLogging.quiet();
    try {
      return ControllerBenchmark.run(args, out);
    } catch (Exception e) {
      err.println("efs-csi benchmark-controller failed: " + e);
      return 1;
    }
  }

  static final String USAGE =
      """
      usage: efs-csi <command> [flags]   (commands of the demo module, lib/demo/)

        demo [--quiet|--json] [--log FILE]
                     one volume's life on this node: the driver in 'all' mode on a temporary
                     socket, the EFS emulator with a mount target (TLS, nfs-ganesha) on 127.0.0.1,
                     a proxy killed mid-transfer and healed; needs root and nfs-ganesha
        benchmark-controller [volumes]
                     time CreateVolume/DeleteVolume of a packaged controller against the embedded
                     EFS emulator, on file systems with 100, 1,000 and 10,000 access points
                     (default 1000 volumes each)
        aot-training node|controller CONFIG
                     (build time) record the classes one plugin loads, for its AOT cache
        lab DIR [--tls]
                     the loopback NFS lab the tests and the benchmarks share (nfs-ganesha, with
                     --tls an stunnel TLS server in front): prints its ports, export and
                     certificate as JSON, serves until stdin closes
      """;
}

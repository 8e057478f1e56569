package io.efscsi.demo;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.DriverRuntime;
import io.efscsi.common.config.UsageException;
import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.emulator.EfsEmulator;
import io.efscsi.emulator.mounttarget.Ganesha;
import io.efscsi.emulator.mounttarget.MountTarget;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code efs-csi demo [--quiet|--json] [--log FILE]}: one volume's whole life on this node through
 * the driver in {@code all} mode on a temporary unix socket ({@link DemoLife}), against the EFS
 * emulator and its mount target on 127.0.0.1 (TLS, BindClientToPartition, nfs-ganesha). Needs root
 * (mounts, cgroups) and nfs-ganesha; without a kernel NFS client also libnfs's tools. The driver's
 * log goes to a file; everything made is removed at the end, on failure and on Ctrl-C.
 */
final class Demo {

  static final String USAGE = "accepted flags: --quiet, --json, --log FILE";

  /**
   * What the demo's deadlines are multiplied by: 4 in scripts/demo-vm's VM (software emulation is
   * several times slower, JVM starts above all), else 1.
   */
  static final int PATIENCE =
      System.getenv().getOrDefault("EFS_CSI_DEMO_WHERE", "").isBlank() ? 1 : 4;

  private Demo() {}

  static int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    boolean quiet = false;
    boolean json = false;
    Path log = defaultLog();
    for (int i = 0; i < args.size(); i++) {
      switch (args.get(i)) {
        case "--quiet" -> quiet = true;
        case "--json" -> json = true;
        case "--log" -> {
          if (i + 1 == args.size()) {
            throw new UsageException("flag '--log' of demo needs a file");
          }
          log = Path.of(args.get(++i)).toAbsolutePath();
        }
        default ->
            throw new UsageException("unknown flag '" + args.get(i) + "' for demo; " + USAGE);
      }
    }
    List<String> missing = missingTools();
    if (!missing.isEmpty()) {
      err.println("efs-csi demo: " + String.join("; ", missing));
      return 1;
    }
    PrintStream narrative = quiet || json ? new PrintStream(PrintStream.nullOutputStream()) : out;
    DemoReport report = new DemoReport(narrative);
    Path tmp;
    try {
      Files.createDirectories(log.getParent());
      DemoLogging.toFile(log);
      tmp = Files.createTempDirectory("efs-csi-demo-");
    } catch (IOException e) {
      err.println("efs-csi demo: cannot start: " + e.getMessage());
      return 1;
    }
    String cgroupParent = "efs-csi-demo-" + ProcessHandle.current().pid();
    DemoCleanup cleanup = new DemoCleanup(tmp, cgroupParent);
    Thread hook =
        new Thread(
            () -> {
              List<String> did = cleanup.run();
              if (!did.isEmpty()) {
                err.println("efs-csi demo: interrupted; cleaned up: " + String.join(", ", did));
              }
            },
            "demo-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    // scripts/demo-vm names the VM the demo runs in (the kernel's client is real there)
    String where = System.getenv().getOrDefault("EFS_CSI_DEMO_WHERE", "");
    String kernel =
        DemoStandIn.kernelCanMountNfs()
            ? "present"
                + (where.isBlank() ? "" : " (" + where + ")")
                + ": the pods' mounts are real NFS mounts by the kernel's client"
            : "none in this kernel: mounts are stand-ins (bind mounts), I/O goes through the"
                + " proxy in user space";
    narrative.println(
        "efs-csi " + BuildInfo.load().version() + " demo: one volume's life on this node");
    report.field("driver log", log);
    report.field("kernel NFS", kernel);
    boolean ok = false;
    try {
      drive(tmp, cgroupParent, cleanup, report);
      ok = true;
    } catch (Exception e) {
      narrative.println();
      err.println("efs-csi demo: a step failed: " + message(e) + " (driver log: " + log + ")");
    } finally {
      List<String> did = cleanup.run();
      narrative.println();
      report.field("cleaned up", String.join(", ", did));
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // Ctrl-C arrived meanwhile: the hook finds nothing left to do
      }
    }
    if (json) {
      out.println(report.json(ok, kernel, log.toString()));
    } else {
      report.table(out, ok);
    }
    return ok ? 0 : 1;
  }

  private static void drive(Path tmp, String cgroupParent, DemoCleanup cleanup, DemoReport report)
      throws Exception {
    long t = System.nanoTime();
    EfsEmulator efs = cleanup.add(EfsEmulator.start());
    String fs = efs.createFileSystem();
    MountTarget target =
        cleanup.add(
            efs.startMountTarget(
                fs, DemoDriver.REGION, Files.createDirectories(tmp.resolve("mount-target"))));
    report.step("start EFS emulator + mount target", System.nanoTime() - t, -1, -1, -1, "");
    report.field("EFS API", efs.endpoint() + ", file system " + fs);
    report.field("mount target", "127.0.0.1:" + target.port() + ", TLS for " + target.dnsName());
    report.field("its CA", target.caFile());
    report.field(
        "behind it",
        "nfs-ganesha pid "
            + target.nfsServer().pid()
            + " on 127.0.0.1:"
            + target.nfsServer().port()
            + ", exporting "
            + target.nfsServer().export());

    t = System.nanoTime();
    DemoStandIn standIn = DemoStandIn.choose(tmp);
    Path socket = tmp.resolve("plugin/csi.sock");
    Files.createDirectories(socket.getParent());
    DriverRuntime driver =
        cleanup.driver(
            DemoDriver.start(
                socket,
                efs,
                DemoDriver.node(tmp, "auto", cgroupParent, standIn.command(), target.port())));
    report.step("start the driver ('all' mode)", System.nanoTime() - t, -1, -1, -1, "");
    report.field("socket", "unix://" + socket);
    try (CsiChannels.Client client = CsiChannels.open(new Endpoint.Unix(socket))) {
      new DemoLife(client, efs, target, standIn, tmp, report).run(fs);
    }
    driver.close();
  }

  /** What is missing for the demo, one phrase each, with the command that installs it. */
  static List<String> missingTools() {
    List<String> missing = new ArrayList<>();
    if (!"root".equals(System.getProperty("user.name"))) {
      missing.add("needs root (it mounts and makes cgroups): run it with sudo");
    }
    List<String> packages = new ArrayList<>();
    if (Ganesha.find() == null) {
      packages.add("nfs-ganesha nfs-ganesha-vfs");
    }
    if (!DemoStandIn.kernelCanMountNfs() && !onPath("nfs-cp")) {
      packages.add("libnfs-utils");
    }
    if (!packages.isEmpty()) {
      missing.add(
          "missing Debian packages, install with: apt-get install -y "
              + String.join(" ", packages));
    }
    return missing;
  }

  private static boolean onPath(String tool) {
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      if (Files.isExecutable(Path.of(d.isEmpty() ? "." : d, tool))) {
        return true;
      }
    }
    return false;
  }

  /** $XDG_STATE_HOME/efs-csi/demo.log, else ~/.local/state/efs-csi/demo.log. */
  private static Path defaultLog() {
    String state = System.getenv("XDG_STATE_HOME");
    Path base =
        state != null && !state.isBlank()
            ? Path.of(state)
            : Path.of(System.getProperty("user.home"), ".local", "state");
    return base.resolve("efs-csi").resolve("demo.log");
  }

  /** An error's message without gRPC's and Java's wrapping. */
  static String message(Throwable e) {
    Throwable c = e;
    while (c.getCause() != null
        && (c.getMessage() == null || c instanceof java.util.concurrent.ExecutionException)) {
      c = c.getCause();
    }
    if (c instanceof io.grpc.StatusRuntimeException s) {
      return s.getStatus().getCode() + ": " + s.getStatus().getDescription();
    }
    return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
  }

  static void deleteTree(Path dir) {
    if (dir == null) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // best effort: a temp dir
    }
  }
}

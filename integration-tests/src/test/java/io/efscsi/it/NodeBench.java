package io.efscsi.it;

import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.supervisor.host.ProcMountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * benchmarks/node.py: the packaged node plugin with the real supervisor, proxies (in front of
 * nfs-ganesha) and bind mounts; the NFS mount itself is a tmpfs here (no NFS client in this
 * kernel), timed separately and subtracted. Prints the NodeStage median of a new volume, then how
 * the plugin's memory and CPU grow with 1, 10, 50 and 100 volumes (each its own proxy) and with 1,
 * 100 and 1000 pods on one volume: resident memory after each step and CPU over an idle window that
 * follows it (the periodic reconcile and health rounds are all it does then).
 */
public final class NodeBench {

  private static final int[] VOLUME_STEPS = {1, 10, 50, 100};
  private static final int[] POD_STEPS = {1, 100, 1000};
  private static final Map<String, String> CONTEXT =
      Map.of("encryptInTransit", "false", "mounttargetip", "127.0.0.1");
  private static final VolumeCapability CAP =
      NodePlugins.mountCap(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER);

  private final Path tmp;
  private final Path script;
  private final PackagedDriver driver;
  private final double window;
  private final int httpPort;

  /** One part of the benchmark, run against a freshly started plugin. */
  private interface Part {
    void run(NodeBench bench) throws Exception;
  }

  private NodeBench(Path tmp, Path script, PackagedDriver driver, double window, int httpPort) {
    this.tmp = tmp;
    this.script = script;
    this.driver = driver;
    this.window = window;
    this.httpPort = httpPort;
  }

  public static void main(String[] args) throws Exception {
    int stages = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    double window = args.length > 1 ? Double.parseDouble(args[1]) : 20;
    Path tmp = Files.createTempDirectory("efscsi-node-bench");
    try (NfsLab lab = new NfsLab(tmp.resolve("lab"), 1)) {
      Path script = fakeMount(tmp);
      Map<String, String> env = pluginEnv(tmp, "bench-node");
      String range = SupervisorIT.freeRange(VOLUME_STEPS[VOLUME_STEPS.length - 1] + 16);
      // each part with a plugin of its own, so that one part's heap growth is not the next's
      List<Part> parts = List.of(b -> b.stageTimes(stages), NodeBench::pods, NodeBench::volumes);
      for (int i = 0; i < parts.size(); i++) {
        Path socket = tmp.resolve("csi-" + i + ".sock");
        int httpPort;
        try (var free = new java.net.ServerSocket(0)) {
          httpPort = free.getLocalPort();
        }
        try (PackagedDriver d =
            PackagedDriver.start(
                socket,
                tmp.resolve("node-" + i + ".log"),
                env,
                "node",
                "--endpoint=unix://" + socket,
                "--state-dir=" + tmp.resolve("state"),
                "--kubelet-root-dir=" + tmp,
                "--proxy-port-range=" + range,
                "--http-endpoint=127.0.0.1:" + httpPort,
                "--proxy-cgroup=none",
                "--mount-absent-grace=1h",
                "--nfs-mount-command=" + script,
                "--mount-target-port=" + lab.nfsPort)) {
          d.awaitSocket(Duration.ofSeconds(30));
          while (!d.identity().probe(ProbeRequest.getDefaultInstance()).getReady().getValue()) {
            Thread.sleep(50);
          }
          parts.get(i).run(new NodeBench(tmp, script, d, window, httpPort));
        } finally {
          for (long pid : proxyPids(tmp.resolve("state"))) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
          }
        }
      }
    } finally {
      HostCleanup.deleteTree(tmp);
    }
  }

  /** The stand-in for mount.nfs4 (this kernel has no NFS client), written into {@code dir}. */
  static Path fakeMount(Path dir) throws IOException {
    Path script = dir.resolve("fake-nfs-mount");
    try (var in = NodeBench.class.getResourceAsStream("/fake-nfs-mount")) {
      Files.write(script, in.readAllBytes());
    }
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    return script;
  }

  /** A benchmark plugin's environment: no AWS settings, node {@code node}, the stand-in's log. */
  static Map<String, String> pluginEnv(Path dir, String node) {
    Map<String, String> env = new HashMap<>(PackagedDriver.cleanEnv());
    env.put("FAKE_NFS_LOG", dir.resolve("mounts.log").toString());
    env.put("CSI_NODE_NAME", node);
    env.put("AWS_REGION", "us-east-1");
    return env;
  }

  /** NodeStage of a new volume each time (a new key, so a new proxy), then unstage. */
  private void stageTimes(int stages) throws Exception {
    List<Double> stage = new ArrayList<>();
    List<Double> mountCmd = new ArrayList<>();
    for (int i = 0; i < stages; i++) {
      String vol = String.format("fs-%016x", 0xabc000L + i);
      Path staging = tmp.resolve("staging-" + i);
      long t0 = System.nanoTime();
      node().nodeStageVolume(stageRequest(vol, staging));
      double ms = (System.nanoTime() - t0) / 1e6;
      long m0 = System.nanoTime();
      Path probe = tmp.resolve("probe-" + i);
      Files.createDirectories(probe);
      new ProcessBuilder(script.toString(), "-o", "x", "127.0.0.1:/", probe.toString())
          .start()
          .waitFor();
      double mountMs = (System.nanoTime() - m0) / 1e6;
      new ProcessBuilder("umount", probe.toString()).start().waitFor();
      stage.add(ms - mountMs);
      mountCmd.add(mountMs);
      unstage(vol, staging);
    }
    System.out.printf(
        Locale.ROOT,
        "NodeStage (new volume, new proxy), median of %d, excluding the mount command: %.0f ms"
            + " (target <= 1500); the tmpfs mount command itself: %.1f ms%n",
        stages,
        median(stage),
        median(mountCmd));
  }

  /** 1, 10, 50 and 100 volumes staged, each its own proxy: plugin and proxies after each step. */
  private void volumes() throws Exception {
    System.out.printf(
        Locale.ROOT,
        "scaling with volumes staged (each its own proxy); CPU over %.0f s idle after each step%n",
        window);
    List<String> staged = new ArrayList<>();
    for (int step : VOLUME_STEPS) {
      List<Double> times = new ArrayList<>();
      while (staged.size() < step) {
        String vol = String.format("fs-%016x", 0xdef000L + staged.size());
        long t0 = System.nanoTime();
        node().nodeStageVolume(stageRequest(vol, tmp.resolve("vol-" + staged.size())));
        times.add((System.nanoTime() - t0) / 1e6);
        staged.add(vol);
      }
      List<Long> proxies = proxyPids(tmp.resolve("state"));
      long pluginCpu0 = cpuTicks(pid());
      long proxiesCpu0 = 0;
      for (long p : proxies) {
        proxiesCpu0 += cpuTicks(p);
      }
      Thread.sleep((long) (window * 1000));
      long pluginCpu = cpuTicks(pid()) - pluginCpu0;
      long proxiesCpu = -proxiesCpu0;
      long proxiesPss = 0;
      for (long p : proxies) {
        proxiesCpu += cpuTicks(p);
        proxiesPss += procKb(p, "smaps_rollup", "Pss:");
      }
      System.out.printf(
          Locale.ROOT,
          "  volumes %4d: plugin RSS %.1f MiB, private dirty %.1f MiB, %s, %d threads, CPU %.2f %%"
              + " of a core; %d proxies, PSS %.1f MiB in all, CPU %.2f %%; NodeStage median %.0f ms (mount"
              + " command included)%n",
          step,
          procKb(pid(), "status", "VmRSS:") / 1024.0,
          procKb(pid(), "smaps_rollup", "Private_Dirty:") / 1024.0,
          heap(),
          procKb(pid(), "status", "Threads:"),
          percent(pluginCpu),
          proxies.size(),
          proxiesPss / 1024.0,
          percent(proxiesCpu),
          median(times));
    }
    for (int i = 0; i < staged.size(); i++) {
      unstage(staged.get(i), tmp.resolve("vol-" + i));
    }
  }

  /** One volume, 1, 100 and 1000 pods publishing it: the plugin after each step. */
  private void pods() throws Exception {
    System.out.printf(
        Locale.ROOT,
        "scaling with pods on one volume; CPU over %.0f s idle after each step%n",
        window);
    String vol = "fs-0123456789abcdef";
    Path staging = tmp.resolve("staging");
    node().nodeStageVolume(stageRequest(vol, staging));
    List<Path> targets = new ArrayList<>();
    for (int step : POD_STEPS) {
      List<Double> publish = new ArrayList<>();
      while (targets.size() < step) {
        Path target = tmp.resolve("pods/p" + targets.size() + "/mount");
        long t0 = System.nanoTime();
        node()
            .nodePublishVolume(
                NodePublishVolumeRequest.newBuilder()
                    .setVolumeId(vol)
                    .setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString())
                    .setVolumeCapability(CAP)
                    .build());
        publish.add((System.nanoTime() - t0) / 1e6);
        targets.add(target);
      }
      var mounts = new ProcMountTable(ProcMountTable.SELF).read();
      long nfs = mounts.stream().filter(m -> m.mountPoint().equals(staging.toString())).count();
      String pods = tmp.resolve("pods") + "/";
      long binds = mounts.stream().filter(m -> m.mountPoint().startsWith(pods)).count();
      long cpu0 = cpuTicks(pid());
      Thread.sleep((long) (window * 1000));
      long cpu = cpuTicks(pid()) - cpu0;
      System.out.printf(
          Locale.ROOT,
          "  pods %5d: plugin RSS %.1f MiB, %s, CPU %.2f %% of a core; %d proxy, %d NFS mount, %d"
              + " bind mounts, %d entries in the mount table; NodePublish median %.1f ms, max %.1f"
              + " ms (target <= 30)%n",
          step,
          procKb(pid(), "status", "VmRSS:") / 1024.0,
          heap(),
          percent(cpu),
          proxyPids(tmp.resolve("state")).size(),
          nfs,
          binds,
          mounts.size(),
          median(publish),
          Collections.max(publish));
    }
    List<Double> unpublish = new ArrayList<>();
    for (Path target : targets) {
      long t0 = System.nanoTime();
      node()
          .nodeUnpublishVolume(
              NodeUnpublishVolumeRequest.newBuilder()
                  .setVolumeId(vol)
                  .setTargetPath(target.toString())
                  .build());
      unpublish.add((System.nanoTime() - t0) / 1e6);
    }
    unstage(vol, staging);
    System.out.printf(
        Locale.ROOT, "NodeUnpublish, median of %d: %.1f ms%n", targets.size(), median(unpublish));
  }

  /** A stub with a fresh deadline: a run takes longer than one. */
  private NodeGrpc.NodeBlockingStub node() {
    return driver.node();
  }

  /** The plugin's heap from its /metrics: committed, and in use after a full collection. */
  private String heap() throws Exception {
    Path jvm = Path.of(ProcessHandle.current().info().command().orElseThrow());
    new ProcessBuilder(jvm.resolveSibling("jcmd").toString(), Long.toString(pid()), "GC.run")
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start()
        .waitFor();
    String metrics;
    try (var client = java.net.http.HttpClient.newHttpClient()) {
      metrics =
          client
              .send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
    }
    return String.format(
        Locale.ROOT,
        "heap %.1f MiB committed, %.1f MiB live",
        metric(metrics, "jvm_memory_committed_bytes") / (1 << 20),
        metric(metrics, "jvm_memory_used_bytes") / (1 << 20));
  }

  private static double metric(String metrics, String name) {
    return metrics
        .lines()
        .filter(l -> l.startsWith(name + "{") && l.contains("area=\"heap\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  private long pid() {
    return driver.process.pid();
  }

  private double percent(long ticks) {
    return ticks / 100.0 / window * 100; // USER_HZ is 100 on Linux
  }

  private void unstage(String vol, Path staging) {
    node()
        .nodeUnstageVolume(
            NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(vol)
                .setStagingTargetPath(staging.toString())
                .build());
  }

  private static NodeStageVolumeRequest stageRequest(String vol, Path staging) {
    return NodeStageVolumeRequest.newBuilder()
        .setVolumeId(vol)
        .setStagingTargetPath(staging.toString())
        .setVolumeCapability(CAP)
        .putAllVolumeContext(CONTEXT)
        .build();
  }

  /** The pids in the supervisor's state records. */
  static List<Long> proxyPids(Path state) throws IOException {
    List<Long> pids = new ArrayList<>();
    Path dir = state.resolve("proxies");
    if (!Files.isDirectory(dir)) {
      return pids;
    }
    try (var recs = Files.list(dir)) {
      for (Path r : recs.filter(f -> f.toString().endsWith(".json")).toList()) {
        pids.add(Long.parseLong(Files.readString(r).replaceAll("(?s).*\"pid\": (\\d+).*", "$1")));
      }
    }
    return pids;
  }

  /** A kB figure from /proc/<pid>/<file>, 0 when the process is gone. */
  static long procKb(long pid, String file, String key) throws IOException {
    try {
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/" + file))) {
        if (l.startsWith(key)) {
          return Long.parseLong(l.replaceAll("\\D", ""));
        }
      }
    } catch (java.nio.file.NoSuchFileException gone) {
      return 0;
    }
    return 0;
  }

  /** utime + stime of a process, in clock ticks. */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  private static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }
}

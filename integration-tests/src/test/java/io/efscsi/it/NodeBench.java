package io.efscsi.it;

import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.supervisor.mounts.MountInfo;
import io.efscsi.supervisor.mounts.ProcMountTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * benchmarks/node.py: the packaged node plugin with the real supervisor, proxies (in front of
 * nfs-ganesha) and bind mounts; the NFS mount itself is a tmpfs here (no NFS client in this
 * kernel), timed separately and subtracted. Prints NodeStage and NodePublish medians, and for 100
 * pods on one volume the proxies, NFS mounts and resident memory of plugin + proxies.
 */
public final class NodeBench {

  private NodeBench() {}

  public static void main(String[] args) throws Exception {
    int stages = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    Path tmp = Files.createTempDirectory("efscsi-node-bench");
    try (NfsLab lab = new NfsLab(tmp.resolve("lab"), 1)) {
      Path script = tmp.resolve("fake-nfs-mount");
      try (var in = NodeBench.class.getResourceAsStream("/fake-nfs-mount")) {
        Files.write(script, in.readAllBytes());
      }
      Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
      Map<String, String> env = new HashMap<>(PackagedDriver.cleanEnv());
      env.put("FAKE_NFS_LOG", tmp.resolve("mounts.log").toString());
      env.put("CSI_NODE_NAME", "bench-node");
      env.put("AWS_REGION", "us-east-1");
      Path socket = tmp.resolve("csi.sock");
      try (PackagedDriver d =
          PackagedDriver.start(
              socket,
              tmp.resolve("node.log"),
              env,
              "node",
              "--endpoint=unix://" + socket,
              "--state-dir=" + tmp.resolve("state"),
              "--proxy-port-range=" + SupervisorIT.freeRange(64),
              "--proxy-cgroup=none",
              "--mount-absent-grace=1h",
              "--nfs-mount-command=" + script,
              "--mount-target-port=" + lab.nfsPort)) {
        d.awaitSocket(Duration.ofSeconds(30));
        while (!d.identity()
            .probe(io.efscsi.csi.v1.ProbeRequest.getDefaultInstance())
            .getReady()
            .getValue()) {
          Thread.sleep(50);
        }
        var n = d.node();
        VolumeCapability cap =
            VolumeCapability.newBuilder()
                .setMount(VolumeCapability.MountVolume.getDefaultInstance())
                .setAccessMode(
                    VolumeCapability.AccessMode.newBuilder()
                        .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
                .build();
        Map<String, String> ctx = Map.of("encryptInTransit", "false", "mounttargetip", "127.0.0.1");

        // 1. NodeStage of a new volume each time (a new key, so a new proxy), then unstage
        List<Double> stage = new ArrayList<>();
        List<Double> mountCmd = new ArrayList<>();
        for (int i = 0; i < stages; i++) {
          String vol = String.format("fs-%016x", 0xabc000L + i);
          Path staging = tmp.resolve("staging-" + i);
          long t0 = System.nanoTime();
          n.nodeStageVolume(stageRequest(vol, staging, cap, ctx));
          double ms = (System.nanoTime() - t0) / 1e6;
          long m0 = System.nanoTime();
          Path probe = tmp.resolve("probe-" + i);
          Files.createDirectories(probe);
          Process p =
              new ProcessBuilder(script.toString(), "-o", "x", "127.0.0.1:/", probe.toString())
                  .start();
          p.waitFor();
          double mountMs = (System.nanoTime() - m0) / 1e6;
          new ProcessBuilder("umount", probe.toString()).start().waitFor();
          stage.add(ms - mountMs);
          mountCmd.add(mountMs);
          n.nodeUnstageVolume(
              NodeUnstageVolumeRequest.newBuilder()
                  .setVolumeId(vol)
                  .setStagingTargetPath(staging.toString())
                  .build());
        }

        // 2. one volume, 100 pods
        String vol = "fs-0123456789abcdef";
        Path staging = tmp.resolve("staging");
        n.nodeStageVolume(stageRequest(vol, staging, cap, ctx));
        List<Double> publish = new ArrayList<>();
        List<Path> targets = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          Path target = tmp.resolve("pods/p" + i + "/mount");
          long t0 = System.nanoTime();
          n.nodePublishVolume(
              NodePublishVolumeRequest.newBuilder()
                  .setVolumeId(vol)
                  .setStagingTargetPath(staging.toString())
                  .setTargetPath(target.toString())
                  .setVolumeCapability(cap)
                  .build());
          publish.add((System.nanoTime() - t0) / 1e6);
          targets.add(target);
        }
        List<MountInfo> mounts = new ProcMountTable(ProcMountTable.SELF).read();
        long nfsMounts =
            mounts.stream().filter(m -> m.mountPoint().equals(staging.toString())).count();
        long binds =
            mounts.stream()
                .filter(m -> m.mountPoint().startsWith(tmp.resolve("pods").toString()))
                .count();
        List<Long> proxies = new ArrayList<>();
        try (var recs = Files.list(tmp.resolve("state/proxies"))) {
          for (Path r : recs.filter(f -> f.toString().endsWith(".json")).toList()) {
            proxies.add(
                Long.parseLong(Files.readString(r).replaceAll("(?s).*\"pid\": (\\d+).*", "$1")));
          }
        }
        long pluginKb = rssKb(d.process.pid());
        long proxyKb = 0;
        for (long pid : proxies) {
          proxyKb += rssKb(pid);
        }
        List<Double> unpublish = new ArrayList<>();
        for (Path target : targets) {
          long t0 = System.nanoTime();
          n.nodeUnpublishVolume(
              NodeUnpublishVolumeRequest.newBuilder()
                  .setVolumeId(vol)
                  .setTargetPath(target.toString())
                  .build());
          unpublish.add((System.nanoTime() - t0) / 1e6);
        }
        n.nodeUnstageVolume(
            NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(vol)
                .setStagingTargetPath(staging.toString())
                .build());

        System.out.printf(
            "NodeStage (new volume, new proxy), median of %d, excluding the mount command: %.0f ms (target <= 1500); the tmpfs mount command itself: %.1f ms%n",
            stages, median(stage), median(mountCmd));
        System.out.printf(
            "NodePublish of a staged volume, median of 100: %.1f ms, max %.1f ms (target <= 30)%n",
            median(publish), Collections.max(publish));
        System.out.printf("NodeUnpublish, median of 100: %.1f ms%n", median(unpublish));
        System.out.printf(
            "100 pods on one volume: %d proxy, %d NFS mount, %d bind mounts; RSS plugin %.1f MiB + proxies %.1f MiB = %.1f MiB%n",
            proxies.size(),
            nfsMounts,
            binds,
            pluginKb / 1024.0,
            proxyKb / 1024.0,
            (pluginKb + proxyKb) / 1024.0);
      }
    }
  }

  static NodeStageVolumeRequest stageRequest(
      String vol, Path staging, VolumeCapability cap, Map<String, String> ctx) {
    return NodeStageVolumeRequest.newBuilder()
        .setVolumeId(vol)
        .setStagingTargetPath(staging.toString())
        .setVolumeCapability(cap)
        .putAllVolumeContext(ctx)
        .build();
  }

  static long rssKb(long pid) throws Exception {
    for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (l.startsWith("VmRSS:")) {
        return Long.parseLong(l.replaceAll("\\D", ""));
      }
    }
    return 0;
  }

  static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }
}

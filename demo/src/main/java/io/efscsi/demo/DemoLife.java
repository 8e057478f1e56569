package io.efscsi.demo;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.NodeGetVolumeStatsRequest;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.csi.v1.VolumeUsage;
import io.efscsi.emulator.EfsEmulator;
import io.efscsi.emulator.mounttarget.MountTarget;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A volume's life through the driver's socket, as the sidecars and kubelet call it: CreateVolume,
 * NodeStage, NodePublish to three pods, a write in pod A read back in pod B, the proxy killed with
 * SIGKILL in the middle of a transfer, NodeGetVolumeStats, NodeUnpublish, NodeUnstage and
 * DeleteVolume; each step checked, timed and told.
 */
final class DemoLife {

  static final List<String> PODS = List.of("pod-a", "pod-b", "pod-c");
  static final int HEAL_MIB = 64;

  private final CsiChannels.Client client;
  private final EfsEmulator efs;
  private final MountTarget target;
  private final DemoStandIn standIn;
  private final Path tmp;
  private final DemoReport report;
  private final StateStore records;

  DemoLife(
      CsiChannels.Client client,
      EfsEmulator efs,
      MountTarget target,
      DemoStandIn standIn,
      Path tmp,
      DemoReport report)
      throws java.io.IOException {
    this.client = client;
    this.efs = efs;
    this.target = target;
    this.standIn = standIn;
    this.tmp = tmp;
    this.report = report;
    this.records = new StateStore(tmp.resolve("state"));
  }

  void run(String fileSystem) throws Exception {
    var controller = ControllerGrpc.newBlockingStub(client.channel());
    var node = NodeGrpc.newBlockingStub(client.channel());
    long t = System.nanoTime();
    String volume =
        controller
            .withDeadlineAfter(30L * Demo.PATIENCE, TimeUnit.SECONDS)
            .createVolume(DemoDriver.efsAp("pvc-demo", fileSystem, Map.of("basePath", "/dynamic")))
            .getVolume()
            .getVolumeId();
    String apId = volume.substring(volume.lastIndexOf(':') + 1);
    Map<String, Object> ap = efs.accessPoint(apId).orElseThrow();
    report.step("CreateVolume", System.nanoTime() - t, -1, -1, -1, "");
    report.field("volume id", volume);
    @SuppressWarnings("unchecked")
    Map<String, Object> user = (Map<String, Object>) ap.get("PosixUser");
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) ap.get("RootDirectory");
    long uid = ((Number) user.get("Uid")).longValue();
    long gid = ((Number) user.get("Gid")).longValue();
    String path = String.valueOf(root.get("Path"));
    report.field("access point", apId + " (user " + uid + ":" + gid + ")");
    report.field("root directory", path + ", made on first mount with mode 700");

    Path staging = tmp.resolve("kubelet/plugins/efs.csi.aws.com/pv-demo/globalmount");
    standIn.prepare(target.directory(path));
    t = System.nanoTime();
    VolumeCapability cap =
        DemoDriver.RWX.toBuilder()
            .setMount(
                VolumeCapability.MountVolume.newBuilder()
                    .addMountFlags("cafile=" + target.caFile()))
            .build();
    node.withDeadlineAfter(60L * Demo.PATIENCE, TimeUnit.SECONDS)
        .nodeStageVolume(
            NodeStageVolumeRequest.newBuilder()
                .setVolumeId(volume)
                .setStagingTargetPath(staging.toString())
                .setVolumeCapability(cap)
                .putVolumeContext("mounttargetip", "127.0.0.1")
                .build());
    ProxyRecord proxy = onlyRecord();
    report.step("NodeStage", System.nanoTime() - t, -1, DemoProxy.rss(proxy.pid()), 0, "");
    report.field("proxy", "pid " + proxy.pid() + " on 127.0.0.1:" + proxy.port());
    report.field("cgroup", DemoProxy.cgroup(proxy));
    report.field("memory limit", DemoProxy.memoryLimit(proxy));
    report.field("upstream", target.dnsName() + " (127.0.0.1:" + target.port() + "), TLS");
    report.field("mount", standIn.lastCall(staging));
    report.field("mount command", standIn.label());

    t = System.nanoTime();
    for (String pod : PODS) {
      node.withDeadlineAfter(30L * Demo.PATIENCE, TimeUnit.SECONDS)
          .nodePublishVolume(
              NodePublishVolumeRequest.newBuilder()
                  .setVolumeId(volume)
                  .setStagingTargetPath(staging.toString())
                  .setTargetPath(podTarget(pod).toString())
                  .setVolumeCapability(DemoDriver.RWX)
                  .build());
    }
    report.step("NodePublish x3", System.nanoTime() - t, -1, -1, -1, "");
    for (String pod : PODS) {
      report.field(pod, podTarget(pod) + " (bind mount of the staging path)");
    }

    DemoIo io = standIn.io(proxy.port(), uid, gid, tmp);
    byte[] note = note(volume);
    t = System.nanoTime();
    io.write(podTarget("pod-a"), "hello.txt", note);
    Path onServer = target.directory(path).resolve("hello.txt");
    report.step(
        "write in pod A", System.nanoTime() - t, note.length, DemoProxy.rss(proxy.pid()), 0, "");
    report.field("how", io.how());
    report.field("on the server", onServer + " owned by " + DemoProxy.owner(onServer));
    t = System.nanoTime();
    byte[] back = io.read(podTarget("pod-b"), "hello.txt");
    if (!Arrays.equals(back, note)) {
      throw new IllegalStateException("pod B read " + back.length + " bytes that differ");
    }
    report.step(
        "read in pod B", System.nanoTime() - t, back.length, DemoProxy.rss(proxy.pid()), 0, "");
    report.field(
        "byte-exact",
        "yes, " + back.length + " bytes, sha256 " + DemoIo.sha256(back).substring(0, 16));
    report.field(
        "pod C sees",
        Files.exists(podTarget("pod-c").resolve("hello.txt")) ? "hello.txt" : "nothing");

    heal(io, proxy, path);

    t = System.nanoTime();
    var stats =
        node.withDeadlineAfter(30L * Demo.PATIENCE, TimeUnit.SECONDS)
            .nodeGetVolumeStats(
                NodeGetVolumeStatsRequest.newBuilder()
                    .setVolumeId(volume)
                    .setVolumePath(podTarget("pod-a").toString())
                    .build());
    report.step("NodeGetVolumeStats", System.nanoTime() - t, -1, -1, -1, "");
    for (VolumeUsage u : stats.getUsageList()) {
      report.field(
          u.getUnit().name().toLowerCase(java.util.Locale.ROOT),
          u.getUnit() == VolumeUsage.Unit.BYTES
              ? "used "
                  + DemoReport.size(u.getUsed())
                  + ", available "
                  + DemoReport.size(u.getAvailable())
                  + ", total "
                  + DemoReport.size(u.getTotal())
              : "used "
                  + u.getUsed()
                  + ", available "
                  + u.getAvailable()
                  + ", total "
                  + u.getTotal());
    }
    report.field(
        "condition",
        stats.getVolumeCondition().getAbnormal()
            ? "abnormal: " + stats.getVolumeCondition().getMessage()
            : "normal");

    t = System.nanoTime();
    for (String pod : PODS) {
      node.withDeadlineAfter(30L * Demo.PATIENCE, TimeUnit.SECONDS)
          .nodeUnpublishVolume(
              NodeUnpublishVolumeRequest.newBuilder()
                  .setVolumeId(volume)
                  .setTargetPath(podTarget(pod).toString())
                  .build());
    }
    report.step("NodeUnpublish x3", System.nanoTime() - t, -1, -1, -1, "");
    report.field("pod mounts", "removed");

    ProxyRecord last = onlyRecord();
    t = System.nanoTime();
    node.withDeadlineAfter(60L * Demo.PATIENCE, TimeUnit.SECONDS)
        .nodeUnstageVolume(
            NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(volume)
                .setStagingTargetPath(staging.toString())
                .build());
    report.step("NodeUnstage", System.nanoTime() - t, -1, -1, -1, "");
    boolean alive = ProcessHandle.of(last.pid()).map(ProcessHandle::isAlive).orElse(false);
    report.field("proxy", "pid " + last.pid() + (alive ? " STILL RUNNING" : " gone"));
    report.field("cgroup", DemoProxy.cgroupGone(last) ? "gone" : "STILL THERE");
    report.field("state record", records.list().isEmpty() ? "gone" : "STILL THERE");
    if (alive || !records.list().isEmpty() || !DemoProxy.cgroupGone(last)) {
      throw new IllegalStateException("NodeUnstage left the proxy, its cgroup or its record");
    }

    t = System.nanoTime();
    controller
        .withDeadlineAfter(30L * Demo.PATIENCE, TimeUnit.SECONDS)
        .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volume).build());
    report.step("DeleteVolume", System.nanoTime() - t, -1, -1, -1, "");
    report.field("access points", efs.accessPointCount(fileSystem) + " left on " + fileSystem);
  }

  /** A file written in pod A's directory, then read through the proxy while it is killed. */
  private void heal(DemoIo io, ProxyRecord before, String path) throws Exception {
    byte[] big = new byte[HEAL_MIB << 20];
    new Random(15).nextBytes(big);
    Files.write(target.directory(path).resolve("big.bin"), big);
    String expected = DemoIo.sha256(big);
    AtomicLong progress = new AtomicLong();
    long t = System.nanoTime();
    // Its own thread: the supervisor learns of proxy exits on the common pool, which a blocked
    // reader there would starve on a 2-core machine.
    FutureTask<String> read =
        new FutureTask<>(() -> io.transfer(podTarget("pod-b"), "big.bin", progress));
    Thread.ofPlatform().name("demo-transfer").daemon().start(read);
    long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(30L * Demo.PATIENCE);
    while (progress.get() < big.length / 4 && !read.isDone() && System.nanoTime() < waitUntil) {
      Thread.sleep(2);
    }
    long atKill = progress.get();
    if (read.isDone() || atKill >= big.length) {
      read.get(); // its error, if it failed
      throw new IllegalStateException("the transfer ended before the proxy could be killed");
    }
    long killed = System.nanoTime();
    ProcessHandle.of(before.pid()).orElseThrow().destroyForcibly();
    ProxyRecord after = DemoProxy.awaitRestart(records, before, 30 * Demo.PATIENCE);
    long serving = System.nanoTime();
    String sha = read.get(60L * Demo.PATIENCE, TimeUnit.SECONDS);
    long done = System.nanoTime();
    if (!sha.equals(expected)) {
      throw new IllegalStateException("the transfer across the heal was not byte-exact");
    }
    report.step(
        "heal: kill -9 mid-transfer",
        done - t,
        big.length,
        DemoProxy.rss(after.pid()),
        after.restarts(),
        DemoReport.GO_DRIVER_AT_HEAL);
    report.field(
        "file",
        "big.bin, " + DemoReport.size(big.length) + ", put in the access point's directory");
    report.field("transfer", "read whole in pod B: " + io.how());
    report.field("took", (done - t) / 1_000_000 + " ms, the heal included");
    report.field(
        "killed",
        "pid "
            + before.pid()
            + " with SIGKILL after "
            + DemoReport.size(atKill)
            + ", "
            + (killed - t) / 1_000_000
            + " ms into the transfer");
    report.field(
        "back",
        "pid "
            + after.pid()
            + " on the same port 127.0.0.1:"
            + after.port()
            + (after.port() == before.port() ? "" : " (A NEW PORT)")
            + " after "
            + (serving - killed) / 1_000_000
            + " ms");
    report.field(
        "transfer result",
        "completed without an error, byte-exact (sha256 " + sha.substring(0, 16) + ")");
    report.field("proxy restarts", after.restarts());
    report.heal(before.port(), after.port(), (serving - killed) / 1_000_000, true);
  }

  private ProxyRecord onlyRecord() throws java.io.IOException {
    List<ProxyRecord> all = records.list();
    if (all.size() != 1) {
      throw new IllegalStateException("expected one proxy record, found " + all.size());
    }
    return all.getFirst();
  }

  Path podTarget(String pod) {
    return tmp.resolve("kubelet/pods/" + pod + "/volumes/kubernetes.io~csi/pv-demo/mount");
  }

  private static byte[] note(String volume) {
    StringBuilder sb = new StringBuilder();
    for (int i = 1; sb.length() < 2000; i++) {
      sb.append("line ").append(i).append(": written by pod A on ").append(volume).append('\n');
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }
}

package io.efscsi.it;

import static io.efscsi.it.NodePlugins.metrics;
import static io.efscsi.it.NodePlugins.mountCap;
import static io.efscsi.it.NodePlugins.mountsUnder;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeGetInfoRequest;
import io.efscsi.csi.v1.NodeGetInfoResponse;
import io.efscsi.csi.v1.NodeGetVolumeStatsRequest;
import io.efscsi.csi.v1.NodeGetVolumeStatsResponse;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeServiceCapability;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.csi.v1.VolumeUsage;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The packaged node plugin over its socket, with the real supervisor and proxies (in front of
 * nfs-ganesha), real bind mounts and the real mount table. This kernel has no NFS client, so the
 * NFS mount command is replaced by one that records its arguments and mounts a tmpfs; the kernel VM
 * suite runs the real mount.nfs4.
 */
class NodeIT {

  static NfsLab lab;
  Path tmp;
  Path stateDir;
  Path fakeLog;
  PackagedDriver node;

  static final String VOLUME = "fs-0123456789abcdef";
  static final Map<String, String> PLAIN_LOOPBACK =
      Map.of("encryptInTransit", "false", "mounttargetip", "127.0.0.1");

  @BeforeAll
  static void startLab() throws Exception {
    lab = new NfsLab(Files.createTempDirectory("efscsi-node-lab"), 1);
  }

  @AfterAll
  static void stopLab() throws Exception {
    if (lab != null) {
      lab.closeAndDelete();
    }
  }

  @BeforeEach
  void startNode(TestInfo info) throws Exception {
    tmp = Files.createTempDirectory("efscsi-node");
    stateDir = tmp.resolve("state");
    fakeLog = tmp.resolve("nfs-mounts.log");
    node = startPlugin(info.getDisplayName(), SupervisorIT.freeRange(8));
  }

  PackagedDriver startPlugin(String name, String ports) throws Exception {
    return startPlugin(name, ports, lab.nfsPort);
  }

  PackagedDriver startPlugin(String name, String ports, int mountTargetPort) throws Exception {
    return NodePlugins.startPlugin(tmp, name, ports, mountTargetPort);
  }

  @AfterEach
  void cleanUp() throws Exception {
    NodePlugins.cleanUp(node, tmp);
  }

  NodeStageVolumeRequest stage(String volumeId, Path staging, Map<String, String> ctx) {
    return NodeStageVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setStagingTargetPath(staging.toString())
        .setVolumeCapability(mountCap(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
        .putAllVolumeContext(ctx)
        .build();
  }

  NodePublishVolumeRequest publish(String volumeId, Path staging, Path target, boolean ro) {
    return NodePublishVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setStagingTargetPath(staging.toString())
        .setTargetPath(target.toString())
        .setReadonly(ro)
        .setVolumeCapability(mountCap(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
        .build();
  }

  List<Path> records() throws Exception {
    Path proxies = stateDir.resolve("proxies");
    try (Stream<Path> s = Files.list(proxies)) {
      return s.filter(p -> p.toString().endsWith(".json")).toList();
    }
  }

  @Test
  void stagePublishHundredPodsUnpublishUnstageLeavesNothingBehind() throws Exception {
    var n = node.node();
    NodeGetInfoResponse info = n.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
    assertEquals("node-it-1", info.getNodeId());
    assertEquals(
        List.of(
            NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME,
            NodeServiceCapability.RPC.Type.SINGLE_NODE_MULTI_WRITER,
            NodeServiceCapability.RPC.Type.GET_VOLUME_STATS,
            NodeServiceCapability.RPC.Type.VOLUME_CONDITION),
        n
            .nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance())
            .getCapabilitiesList()
            .stream()
            .map(c -> c.getRpc().getType())
            .toList());

    Path staging = tmp.resolve("kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/v1/globalmount");
    Files.createDirectories(staging);
    n.nodeStageVolume(stage(VOLUME, staging, PLAIN_LOOPBACK));
    n.nodeStageVolume(stage(VOLUME, staging, PLAIN_LOOPBACK)); // idempotent
    List<String> calls = Files.readAllLines(fakeLog);
    assertEquals(1, calls.size(), "one NFS mount for the volume: " + calls);
    String call = calls.getFirst();
    assertTrue(call.matches("-o \\S*soft\\S*,port=\\d+ 127\\.0\\.0\\.1:/ " + staging), call);
    for (String opt :
        List.of(
            "nfsvers=4.1",
            "rsize=1048576",
            "wsize=1048576",
            "timeo=50",
            "retrans=2",
            "noresvport")) {
      assertTrue(call.contains(opt), opt + " missing from " + call);
    }
    int port = Integer.parseInt(call.replaceAll(".*port=(\\d+) .*", "$1"));
    assertEquals(1, records().size());
    assertTrue(Files.readString(records().getFirst()).contains("\"port\": " + port));
    assertTrue(PackagedDriver.connectable(stateDir.resolve("proxies/proxy-" + port + ".sock")));

    List<Path> targets = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      Path target = tmp.resolve("kubelet/pods/pod-" + i + "/volumes/kubernetes.io~csi/pv/mount");
      n.nodePublishVolume(publish(VOLUME, staging, target, i % 10 == 9));
      targets.add(target);
    }
    n.nodePublishVolume(publish(VOLUME, staging, targets.get(3), false)); // idempotent
    assertEquals(101, mountsUnder(tmp).size(), "1 staging mount + 100 bind mounts");
    Files.writeString(targets.get(0).resolve("hello.txt"), "written by pod 0");
    assertEquals("written by pod 0", Files.readString(targets.get(57).resolve("hello.txt")));
    assertThrows(
        java.io.IOException.class, () -> Files.writeString(targets.get(9).resolve("x"), "ro"));
    assertEquals(1, records().size(), "still one proxy for 100 pods");

    NodeGetVolumeStatsResponse stats =
        n.nodeGetVolumeStats(
            NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(VOLUME)
                .setVolumePath(targets.get(1).toString())
                .build());
    assertEquals(VolumeUsage.Unit.BYTES, stats.getUsage(0).getUnit());
    assertEquals(4L << 20, stats.getUsage(0).getTotal(), "the 4 MiB test tmpfs");

    for (Path target : targets) {
      n.nodeUnpublishVolume(
          NodeUnpublishVolumeRequest.newBuilder()
              .setVolumeId(VOLUME)
              .setTargetPath(target.toString())
              .build());
      assertFalse(Files.exists(target), target + " left behind");
    }
    n.nodeUnpublishVolume( // idempotent
        NodeUnpublishVolumeRequest.newBuilder()
            .setVolumeId(VOLUME)
            .setTargetPath(targets.get(0).toString())
            .build());
    n.nodeUnstageVolume(
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId(VOLUME)
            .setStagingTargetPath(staging.toString())
            .build());
    n.nodeUnstageVolume( // idempotent
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId(VOLUME)
            .setStagingTargetPath(staging.toString())
            .build());

    assertEquals(List.of(), mountsUnder(tmp), "no mount left");
    assertEquals(List.of(), records(), "no state record left");
    assertFalse(
        PackagedDriver.connectable(stateDir.resolve("proxies/proxy-" + port + ".sock")),
        "no proxy left");
    try (var s = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
      assertTrue(s.isBound(), "the port is free again");
    }
  }

  @Test
  void volumesWithTheSameKeyShareOneProxyAndAKilledPluginIsAdopted() throws Exception {
    var n = node.node();
    Path s1 = tmp.resolve("kubelet/plugins/a/globalmount");
    Path s2 = tmp.resolve("kubelet/plugins/b/globalmount");
    n.nodeStageVolume(stage(VOLUME, s1, PLAIN_LOOPBACK));
    n.nodeStageVolume(stage(VOLUME + ":/sub/dir", s2, PLAIN_LOOPBACK));
    List<String> calls = Files.readAllLines(fakeLog);
    assertEquals(2, calls.size());
    assertTrue(calls.get(1).contains(" 127.0.0.1:/sub/dir "), calls.get(1));
    assertEquals(1, records().size(), "one proxy for two volumes of one key");
    String m = metrics(node);
    assertTrue(
        m.contains(
            "efs_csi_csi_call_duration_seconds_count{code=\"OK\",method=\"NodeStageVolume\"} 2"),
        m);
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!m.matches(
        "(?s).*efs_csi_volume_proxy_up\\{port=\"\\d+\",volume=\"fs-[0-9a-f]+\"} 1\\.0.*")) {
      assertTrue(System.nanoTime() < deadline, "no per-volume series within 20 s:\n" + m);
      Thread.sleep(500);
      m = metrics(node);
    }
    Path target = tmp.resolve("kubelet/pods/p/volumes/kubernetes.io~csi/pv/mount");
    n.nodePublishVolume(publish(VOLUME, s1, target, false));
    String record = Files.readString(records().getFirst());
    long pid = Long.parseLong(record.replaceAll("(?s).*\"pid\": (\\d+).*", "$1"));

    node.process.destroyForcibly(); // the plugin is OOM-killed
    node.process.waitFor();
    assertTrue(
        ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "the proxy lives on");
    node = startPlugin("second", SupervisorIT.freeRange(8));
    assertEquals(
        pid,
        Long.parseLong(
            Files.readString(records().getFirst()).replaceAll("(?s).*\"pid\": (\\d+).*", "$1")));
    n = node.node();
    n.nodeUnpublishVolume(
        NodeUnpublishVolumeRequest.newBuilder()
            .setVolumeId(VOLUME)
            .setTargetPath(target.toString())
            .build());
    n.nodeUnstageVolume(
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId(VOLUME)
            .setStagingTargetPath(s1.toString())
            .build());
    assertTrue(
        ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
        "still used by the second volume");
    n.nodeUnstageVolume(
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId(VOLUME)
            .setStagingTargetPath(s2.toString())
            .build());
    assertEquals(List.of(), records());
    assertEquals(List.of(), mountsUnder(tmp));
  }

  @Test
  void aTlsVolumeGetsAClientCertificateAndItsProxyServesNfsOverTls() throws Exception {
    node.close();
    node.process.waitFor(); // the old plugin must be gone before the new one takes the socket
    node = startPlugin("tls", SupervisorIT.freeRange(4), lab.tlsPort);
    var n = node.node();
    Path staging = tmp.resolve("kubelet/plugins/tls/globalmount");
    NodeStageVolumeRequest req =
        stage("fs-12345678", staging, Map.of("mounttargetip", "127.0.0.1")).toBuilder()
            .setVolumeCapability(
                mountCap(
                    VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER,
                    "cafile=" + lab.dir.resolve("srv.crt")))
            .build();
    n.nodeStageVolume(req);
    String record = Files.readString(records().getFirst());
    assertTrue(record.contains("\"tls\": \"true\""), record);
    assertTrue(record.contains("\"tls.server-name\": \"" + NfsLab.SERVER_NAME + "\""), record);
    String cert = record.replaceAll("(?s).*\"tls.cert-file\": \"([^\"]+)\".*", "$1");
    assertTrue(Files.isRegularFile(Path.of(cert)), "client certificate written: " + record);
    assertEquals(
        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(Path.of(cert))));
    int port = Integer.parseInt(record.replaceAll("(?s).*\"port\": (\\d+).*", "$1"));
    NfsLab.Result ls = lab.run("nfs-ls", lab.url(port, ""));
    assertEquals(0, ls.exit(), "NFS through the node's TLS proxy: " + ls.output());
    assertTrue(ls.output().contains("big.bin"), ls.output());

    n.nodeUnstageVolume(
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId("fs-12345678")
            .setStagingTargetPath(staging.toString())
            .build());
    assertEquals(List.of(), records());
    assertFalse(Files.exists(Path.of(cert)), "the certificate goes with its proxy");
  }

  @Test
  void badRequestsGetClearErrorsAndChangeNothing() throws Exception {
    var n = node.node();
    Path staging = tmp.resolve("kubelet/plugins/x/globalmount");
    Path target = tmp.resolve("kubelet/pods/x/mount");
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () -> n.nodePublishVolume(publish(VOLUME, staging, target, false)));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("is not staged at " + staging),
        e.getStatus().getDescription());

    e =
        assertThrows(
            StatusRuntimeException.class,
            () -> n.nodeStageVolume(stage("fs-nothex", staging, PLAIN_LOOPBACK)));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());

    e =
        assertThrows(
            StatusRuntimeException.class,
            () -> n.nodeStageVolume(stage(VOLUME, staging, Map.of("nosuchkey", "1"))));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("nosuchkey"), e.getStatus().getDescription());

    NodeStageVolumeRequest block =
        stage(VOLUME, staging, PLAIN_LOOPBACK).toBuilder()
            .setVolumeCapability(
                VolumeCapability.newBuilder()
                    .setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                    .setAccessMode(
                        VolumeCapability.AccessMode.newBuilder()
                            .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)))
            .build();
    e = assertThrows(StatusRuntimeException.class, () -> n.nodeStageVolume(block));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());

    e =
        assertThrows(
            StatusRuntimeException.class,
            () -> n.nodeStageVolume(stage(VOLUME, Path.of("relative/path"), PLAIN_LOOPBACK)));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("staging_target_path"),
        e.getStatus().getDescription());

    assertEquals(List.of(), mountsUnder(tmp));
    assertFalse(Files.exists(stateDir.resolve("proxies")) && !records().isEmpty());
    assertFalse(Files.exists(fakeLog), "no mount command was run");

    // a mount the server refuses: INTERNAL with mount's reason, logged once at ERROR without a
    // stack trace, and the proxy it started is released again
    e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                n.nodeStageVolume(stage(VOLUME + ":/fake-mount-failure", staging, PLAIN_LOOPBACK)));
    assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
    String why = e.getStatus().getDescription();
    assertTrue(why.contains("access denied by server"), why);
    List<String> errors =
        node.logText().lines().filter(l -> l.contains("access denied by server")).toList();
    assertEquals(1, errors.size(), "the failed mount is logged once: " + errors);
    assertTrue(errors.getFirst().contains(" ERROR "), errors.getFirst());
    assertFalse(node.logText().contains("\tat io.efscsi."), "no stack trace:\n" + node.logText());
    assertEquals(List.of(), mountsUnder(tmp));
    assertTrue(records().isEmpty(), "the proxy of the failed stage is released: " + records());
  }
}

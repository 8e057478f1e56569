package io.efscsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.csi.v1.NodeGetVolumeStatsRequest;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.node.cloud.FixedNodeMetadata;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.mounts.FakeKernel;
import io.efscsi.node.mounts.PublishMounts;
import io.efscsi.node.mounts.StagingMounts;
import io.efscsi.node.paths.PathConfinement;
import io.efscsi.node.stats.VolumeHealth;
import io.efscsi.node.stats.VolumeStats;
import io.efscsi.supervisor.host.MountPoints;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's calls refuse staging, target and volume paths outside the kubelet dir before they
 * touch anything: nothing is mounted, unmounted or planned.
 */
class NodeServicePathsTest {

  @TempDir Path tmp;
  Path kubelet;
  Path outside;
  final FakeKernel kernel = new FakeKernel();
  final MountPoints mounts = new MountPoints(kernel);
  int plans;
  NodeService node;

  static final VolumeCapability RWX =
      VolumeCapability.newBuilder()
          .setMount(VolumeCapability.MountVolume.getDefaultInstance())
          .setAccessMode(
              VolumeCapability.AccessMode.newBuilder()
                  .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
          .build();

  /** Answers nothing: every call here must fail before it gets a reply. */
  static final class NoReply<T> implements StreamObserver<T> {
    @Override
    public void onNext(T value) {
      throw new AssertionError("a reply: " + value);
    }

    @Override
    public void onError(Throwable t) {
      throw new AssertionError(t);
    }

    @Override
    public void onCompleted() {
      throw new AssertionError("completed");
    }
  }

  @BeforeEach
  void service() throws Exception {
    tmp = tmp.toRealPath();
    kubelet = Files.createDirectories(tmp.resolve("kubelet"));
    outside = Files.createDirectories(tmp.resolve("outside"));
    Supplier<io.efscsi.supervisor.ProxySupervisor> noSupervisor =
        () -> {
          throw new AssertionError("the supervisor was asked");
        };
    node =
        new NodeService(
            (id, ctx, flags, ro) -> {
              plans++;
              throw new AssertionError("planned");
            },
            new PathConfinement(kubelet, mounts),
            new StagingMounts(
                noSupervisor, kernel, mounts, ClientCertificateSource.NONE, Duration.ZERO),
            new PublishMounts(kernel, mounts, Duration.ZERO),
            new VolumeHealth(
                mounts, noSupervisor, new VolumeStats(Duration.ofSeconds(1)), Optional.empty()),
            new io.efscsi.node.events.PublishedPods(),
            new FixedNodeMetadata("i-1", "us-east-1", Optional.empty(), "test"),
            OptionalInt.empty(),
            OptionalInt.empty(),
            true);
  }

  private void refused(Runnable call, String field, Path value) {
    DriverException e = assertThrows(DriverException.class, call::run);
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind(), e.getMessage());
    assertTrue(e.getMessage().startsWith(field + " '" + value + "' is not below"), e.getMessage());
  }

  @Test
  void unpublishAndUnstageOutsideUnmountNothing() throws Exception {
    Path mounted = outside.resolve("mnt");
    kernel.mountNfs("127.0.0.1:/", mounted, List.of("port=20049"));
    // a link inside the kubelet dir to the mount outside
    Path link = Files.createSymbolicLink(kubelet.resolve("link"), mounted);
    for (Path p : List.of(mounted, link)) {
      refused(
          () ->
              node.nodeUnpublishVolume(
                  NodeUnpublishVolumeRequest.newBuilder()
                      .setVolumeId("fs-1")
                      .setTargetPath(p.toString())
                      .build(),
                  new NoReply<>()),
          "target_path",
          p);
      refused(
          () ->
              node.nodeUnstageVolume(
                  NodeUnstageVolumeRequest.newBuilder()
                      .setVolumeId("fs-1")
                      .setStagingTargetPath(p.toString())
                      .build(),
                  new NoReply<>()),
          "staging_target_path",
          p);
    }
    assertTrue(mounts.isMounted(mounted), "still mounted");
    assertEquals(List.of("nfs 127.0.0.1:/ " + mounted), kernel.calls, "no unmount");
  }

  @Test
  void stageAndPublishOutsideAreRefusedBeforePlanningOrMounting() {
    Path staging = kubelet.resolve("plugins/x/globalmount");
    refused(
        () ->
            node.nodeStageVolume(
                NodeStageVolumeRequest.newBuilder()
                    .setVolumeId("fs-1")
                    .setStagingTargetPath(outside.resolve("globalmount").toString())
                    .setVolumeCapability(RWX)
                    .build(),
                new NoReply<>()),
        "staging_target_path",
        outside.resolve("globalmount"));
    refused(
        () ->
            node.nodePublishVolume(
                NodePublishVolumeRequest.newBuilder()
                    .setVolumeId("fs-1")
                    .setStagingTargetPath(staging.toString())
                    .setTargetPath(outside.resolve("mount").toString())
                    .setVolumeCapability(RWX)
                    .build(),
                new NoReply<>()),
        "target_path",
        outside.resolve("mount"));
    refused(
        () ->
            node.nodePublishVolume(
                NodePublishVolumeRequest.newBuilder()
                    .setVolumeId("fs-1")
                    .setStagingTargetPath(outside.resolve("globalmount").toString())
                    .setTargetPath(kubelet.resolve("pods/p/mount").toString())
                    .setVolumeCapability(RWX)
                    .build(),
                new NoReply<>()),
        "staging_target_path",
        outside.resolve("globalmount"));
    assertEquals(0, plans);
    assertEquals(List.of(), kernel.calls);
    assertTrue(Files.notExists(outside.resolve("mount")), "no target directory made");
  }

  @Test
  void statsOfAPathOutsideAreNotFound() throws Exception {
    Path mounted = outside.resolve("mnt");
    kernel.mountNfs("127.0.0.1:/", mounted, List.of("port=20049"));
    DriverException e =
        assertThrows(
            DriverException.class,
            () ->
                node.nodeGetVolumeStats(
                    NodeGetVolumeStatsRequest.newBuilder()
                        .setVolumeId("fs-1")
                        .setVolumePath(mounted.toString())
                        .build(),
                    new NoReply<>()));
    assertEquals(DriverException.Kind.NOT_FOUND, e.kind());
    assertTrue(e.getMessage().startsWith("volume_path '" + mounted + "' is not below"));
  }
}

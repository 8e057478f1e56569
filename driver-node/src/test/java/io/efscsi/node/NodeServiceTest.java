package io.efscsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.node.cloud.FixedNodeMetadata;
import io.efscsi.node.events.InMemoryEventApi;
import io.efscsi.node.events.PodEvents;
import io.efscsi.node.events.PublishedPods;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.mounts.FakeKernel;
import io.efscsi.node.mounts.PublishMounts;
import io.efscsi.node.mounts.StagingMounts;
import io.efscsi.node.paths.PathConfinement;
import io.efscsi.node.stats.VolumeHealth;
import io.efscsi.node.stats.VolumeStats;
import io.efscsi.node.volume.VolumeContext;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.MountPoints;
import io.fabric8.kubernetes.api.model.Event;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NodePublishVolume and NodeUnpublishVolume with kubelet's pod info (podInfoOnMount): the node
 * remembers the pod of a published target, so its events go on the Pod without any read, and
 * forgets it at unpublish.
 */
class NodeServiceTest {

  static final String UID = "6f1c1f36-0d0e-4bb7-9a57-1c9a1b4ad9e1";

  @TempDir Path tmp;
  Path kubelet;
  final FakeKernel kernel = new FakeKernel();
  final MountPoints mounts = new MountPoints(kernel);
  final PublishedPods pods = new PublishedPods();
  final InMemoryEventApi api = new InMemoryEventApi();
  final PodEvents events = new PodEvents(api, pods, "node-1", Clock.systemUTC());
  NodeService service;

  @BeforeEach
  void service() throws Exception {
    kubelet = tmp.toRealPath();
    Supplier<ProxySupervisor> noSupervisor =
        () -> {
          throw new AssertionError("the supervisor was asked");
        };
    service =
        new NodeService(
            (id, ctx, flags, ro) -> {
              throw new AssertionError("planned");
            },
            new PathConfinement(kubelet, mounts),
            new StagingMounts(
                noSupervisor, kernel, mounts, ClientCertificateSource.NONE, Duration.ZERO),
            new PublishMounts(kernel, mounts, Duration.ZERO),
            new VolumeHealth(
                mounts, noSupervisor, new VolumeStats(Duration.ofSeconds(1)), Optional.empty()),
            pods,
            new FixedNodeMetadata("i-1", "us-east-1", Optional.empty(), "test"),
            OptionalInt.empty(),
            OptionalInt.empty(),
            false);
  }

  /** Collects a unary call's answer. */
  static <T> StreamObserver<T> answer(List<T> into) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        into.add(value);
      }

      @Override
      public void onError(Throwable t) {
        throw new AssertionError(t);
      }

      @Override
      public void onCompleted() {}
    };
  }

  Path staging() {
    Path staging = kubelet.resolve("staging");
    kernel.mountNfs("127.0.0.1:/", staging, List.of("soft", "port=20049"));
    return staging;
  }

  Path target() {
    return kubelet.resolve("pods/" + UID + "/volumes/kubernetes.io~csi/pv-data/mount");
  }

  NodePublishVolumeRequest publish(Path staging, Path target, Map<String, String> ctx) {
    return NodePublishVolumeRequest.newBuilder()
        .setVolumeId("fs-1")
        .setStagingTargetPath(staging.toString())
        .setTargetPath(target.toString())
        .setVolumeCapability(
            VolumeCapability.newBuilder()
                .setMount(VolumeCapability.MountVolume.getDefaultInstance())
                .setAccessMode(
                    VolumeCapability.AccessMode.newBuilder()
                        .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER)))
        .putAllVolumeContext(ctx)
        .build();
  }

  static Map<String, String> podInfo() {
    return Map.of(
        VolumeContext.POD_NAME, "writer-0",
        VolumeContext.POD_NAMESPACE, "team-a",
        VolumeContext.POD_UID, UID,
        VolumeContext.SERVICE_ACCOUNT_NAME, "default",
        VolumeContext.EPHEMERAL, "false");
  }

  @Test
  void aPublishedPodGetsItsEventsWithoutAReadUntilUnpublished() throws Exception {
    Path target = target();
    service.nodePublishVolume(
        publish(staging(), target, podInfo()), answer(new java.util.ArrayList<>()));
    assertTrue(mounts.isMounted(target));

    assertTrue(events.record(target.toString(), PodEvents.Type.Warning, "ProxyRestarted", "r1"));
    Event onPod = api.all().getLast();
    assertEquals("Pod", onPod.getInvolvedObject().getKind());
    assertEquals("team-a", onPod.getInvolvedObject().getNamespace());
    assertEquals("writer-0", onPod.getInvolvedObject().getName());
    assertEquals(UID, onPod.getInvolvedObject().getUid());
    assertEquals(0, api.nodeReads.get(), "nothing read");

    service.nodeUnpublishVolume(
        NodeUnpublishVolumeRequest.newBuilder()
            .setVolumeId("fs-1")
            .setTargetPath(target.toString())
            .build(),
        answer(new java.util.ArrayList<>()));
    assertTrue(events.record(target.toString(), PodEvents.Type.Warning, "ProxyRestarted", "r2"));
    Event onNode = api.all().getLast();
    assertEquals("Node", onNode.getInvolvedObject().getKind(), "forgotten at unpublish");
    assertEquals("pod " + UID + ", PersistentVolume pv-data: r2", onNode.getMessage());
  }

  @Test
  void aPublishWithoutPodInfoLeavesTheNodeToTheEvents() throws Exception {
    Path target = target();
    service.nodePublishVolume(
        publish(staging(), target, Map.of()), answer(new java.util.ArrayList<>()));
    assertTrue(events.record(target.toString(), PodEvents.Type.Warning, "ProxyRestarted", "r"));
    assertEquals("Node", api.all().getLast().getInvolvedObject().getKind());
  }

  @Test
  void anInlineEphemeralVolumeIsInvalidArgumentAndMountsNothing() {
    Map<String, String> ctx = new java.util.HashMap<>(podInfo());
    ctx.put(VolumeContext.EPHEMERAL, "true");
    NodePublishVolumeRequest req =
        publish(kubelet.resolve("staging"), target(), ctx).toBuilder()
            .clearStagingTargetPath()
            .build();
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> service.nodePublishVolume(req, answer(new java.util.ArrayList<>())));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertTrue(
        e.getMessage().contains("\"csi.storage.k8s.io/ephemeral\"=\"true\""), e.getMessage());
    assertEquals(List.of(), kernel.calls);
  }
}

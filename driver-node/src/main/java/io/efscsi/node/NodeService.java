package io.efscsi.node;

import io.efscsi.common.error.DriverException;
import io.efscsi.common.grpc.InFlight;
import io.efscsi.csi.v1.NodeExpandVolumeRequest;
import io.efscsi.csi.v1.NodeExpandVolumeResponse;
import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeGetCapabilitiesResponse;
import io.efscsi.csi.v1.NodeGetInfoRequest;
import io.efscsi.csi.v1.NodeGetInfoResponse;
import io.efscsi.csi.v1.NodeGetVolumeStatsRequest;
import io.efscsi.csi.v1.NodeGetVolumeStatsResponse;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodePublishVolumeResponse;
import io.efscsi.csi.v1.NodeServiceCapability;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeResponse;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeResponse;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeResponse;
import io.efscsi.csi.v1.Topology;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.csi.v1.VolumeCondition;
import io.efscsi.csi.v1.VolumeUsage;
import io.efscsi.node.cloud.NodeMetadata;
import io.efscsi.node.events.PublishedPods;
import io.efscsi.node.mounts.PublishMounts;
import io.efscsi.node.mounts.StagingMounts;
import io.efscsi.node.paths.PathConfinement;
import io.efscsi.node.stats.VolumeHealth;
import io.efscsi.node.volume.MountPlan;
import io.efscsi.node.volume.PodRef;
import io.efscsi.node.volume.VolumeContext;
import io.efscsi.node.volume.VolumePlanner;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Semaphore;

/**
 * The CSI Node service: validates, takes the per-volume guard, delegates to {@link StagingMounts},
 * {@link PublishMounts} and {@link VolumeHealth}, and maps results; tells {@link PublishedPods}
 * which pod a target is published for (events go on it). Errors are DriverExceptions, turned into
 * gRPC codes by the server's interceptor.
 */
public final class NodeService extends NodeGrpc.NodeImplBase {

  public static final String TOPOLOGY_ZONE_KEY = "topology.kubernetes.io/zone";

  private final VolumePlanner planner;
  private final PathConfinement paths;
  private final StagingMounts staging;
  private final PublishMounts publishing;
  private final VolumeHealth health;
  private final PublishedPods pods;
  private final NodeMetadata node;
  private final OptionalInt volumeAttachLimit;
  private final boolean volumeStats;
  private final InFlight inFlight = new InFlight();
  private final Semaphore mountCalls;
  private final int mountCallLimit;

  public NodeService(
      VolumePlanner planner,
      PathConfinement paths,
      StagingMounts staging,
      PublishMounts publishing,
      VolumeHealth health,
      PublishedPods pods,
      NodeMetadata node,
      OptionalInt maxInflightMountCalls,
      OptionalInt volumeAttachLimit,
      boolean volumeStats) {
    this.planner = planner;
    this.paths = paths;
    this.staging = staging;
    this.publishing = publishing;
    this.health = health;
    this.pods = pods;
    this.node = node;
    this.volumeAttachLimit = volumeAttachLimit;
    this.volumeStats = volumeStats;
    this.mountCallLimit = maxInflightMountCalls.orElse(Integer.MAX_VALUE);
    this.mountCalls = new Semaphore(mountCallLimit);
  }

  @Override
  public void nodeStageVolume(
      NodeStageVolumeRequest req, StreamObserver<NodeStageVolumeResponse> out) {
    String volumeId = required("volume_id", req.getVolumeId());
    Path stagingPath = path("staging_target_path", req.getStagingTargetPath());
    checkCapability(req.hasVolumeCapability(), req.getVolumeCapability());
    MountPlan plan =
        planner.plan(
            volumeId,
            req.getVolumeContextMap(),
            req.getVolumeCapability().getMount().getMountFlagsList(),
            readOnlyMode(req.getVolumeCapability()));
    guarded("NodeStageVolume", volumeId, true, () -> staging.stage(volumeId, stagingPath, plan));
    reply(out, NodeStageVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodeUnstageVolume(
      NodeUnstageVolumeRequest req, StreamObserver<NodeUnstageVolumeResponse> out) {
    String volumeId = required("volume_id", req.getVolumeId());
    Path stagingPath = path("staging_target_path", req.getStagingTargetPath());
    guarded("NodeUnstageVolume", volumeId, false, () -> staging.unstage(volumeId, stagingPath));
    health.forget(volumeId);
    reply(out, NodeUnstageVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodePublishVolume(
      NodePublishVolumeRequest req, StreamObserver<NodePublishVolumeResponse> out) {
    String volumeId = required("volume_id", req.getVolumeId());
    Optional<PodRef> pod = VolumeContext.podRef(req.getVolumeContextMap());
    Path stagingPath = path("staging_target_path", req.getStagingTargetPath());
    Path targetPath = path("target_path", req.getTargetPath());
    checkCapability(req.hasVolumeCapability(), req.getVolumeCapability());
    boolean readOnly = req.getReadonly() || readOnlyMode(req.getVolumeCapability());
    guarded(
        "NodePublishVolume",
        volumeId,
        true,
        () -> {
          publishing.publish(volumeId, stagingPath, targetPath, readOnly);
          pod.ifPresent(p -> pods.published(targetPath.toString(), p));
        },
        targetPath.toString());
    reply(out, NodePublishVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodeUnpublishVolume(
      NodeUnpublishVolumeRequest req, StreamObserver<NodeUnpublishVolumeResponse> out) {
    String volumeId = required("volume_id", req.getVolumeId());
    Path targetPath = path("target_path", req.getTargetPath());
    guarded(
        "NodeUnpublishVolume",
        volumeId,
        false,
        () -> {
          publishing.unpublish(volumeId, targetPath);
          pods.unpublished(targetPath.toString());
        },
        targetPath.toString());
    reply(out, NodeUnpublishVolumeResponse.getDefaultInstance());
  }

  @Override
  public void nodeGetVolumeStats(
      NodeGetVolumeStatsRequest req, StreamObserver<NodeGetVolumeStatsResponse> out) {
    String volumeId = required("volume_id", req.getVolumeId());
    Path volumePath = Path.of(required("volume_path", req.getVolumePath()));
    if (!volumePath.isAbsolute() || !volumePath.normalize().equals(volumePath)) {
      // CSI: "Volume does not exist ... NOT_FOUND"; a relative path names no mounted volume
      throw DriverException.notFound(
          "volume %s is not mounted at '%s': volume_path must be an absolute, normalised path",
          volumeId, req.getVolumePath());
    }
    // likewise a path outside the kubelet dir: no volume of ours is mounted there
    paths.check("volume_path", volumePath, DriverException.Kind.NOT_FOUND);
    VolumeHealth.Report r;
    try {
      r = health.report(volumeId, volumePath);
    } catch (IOException e) {
      throw DriverException.internal("NodeGetVolumeStats " + volumeId + ": " + e.getMessage(), e);
    }
    NodeGetVolumeStatsResponse.Builder b =
        NodeGetVolumeStatsResponse.newBuilder()
            .setVolumeCondition(
                VolumeCondition.newBuilder().setAbnormal(r.abnormal()).setMessage(r.message()));
    r.usage()
        .ifPresent(u ->
            b.addUsage(
                    VolumeUsage.newBuilder()
                        .setUnit(VolumeUsage.Unit.BYTES)
                        .setTotal(u.totalBytes())
                        .setAvailable(u.availableBytes())
                        .setUsed(u.usedBytes()))
                .addUsage(
                    VolumeUsage.newBuilder()
                        .setUnit(VolumeUsage.Unit.INODES)
                        .setTotal(u.totalInodes())
                        .setAvailable(u.freeInodes())
                        .setUsed(Math.max(0, u.totalInodes() - u.freeInodes()))));
    reply(out, b.build());
  }

  @Override
  public void nodeExpandVolume(
      NodeExpandVolumeRequest req, StreamObserver<NodeExpandVolumeResponse> out) {
    out.onError(
        Status.UNIMPLEMENTED
            .withDescription("NodeExpandVolume: EFS file systems are elastic; nothing to expand")
            .asRuntimeException());
  }

  @Override
  public void nodeGetCapabilities(
      NodeGetCapabilitiesRequest req, StreamObserver<NodeGetCapabilitiesResponse> out) {
    NodeGetCapabilitiesResponse.Builder b = NodeGetCapabilitiesResponse.newBuilder();
    List<NodeServiceCapability.RPC.Type> types =
        new java.util.ArrayList<>(
            List.of(
                NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME,
                NodeServiceCapability.RPC.Type.SINGLE_NODE_MULTI_WRITER));
    if (volumeStats) {
      // as the Go driver: only with --vol-metrics-opt-in; the condition travels in the stats call
      types.add(NodeServiceCapability.RPC.Type.GET_VOLUME_STATS);
      types.add(NodeServiceCapability.RPC.Type.VOLUME_CONDITION);
    }
    for (NodeServiceCapability.RPC.Type t : types) {
      b.addCapabilities(
          NodeServiceCapability.newBuilder()
              .setRpc(NodeServiceCapability.RPC.newBuilder().setType(t)));
    }
    reply(out, b.build());
  }

  @Override
  public void nodeGetInfo(NodeGetInfoRequest req, StreamObserver<NodeGetInfoResponse> out) {
    NodeGetInfoResponse.Builder b = NodeGetInfoResponse.newBuilder().setNodeId(node.nodeId());
    node.availabilityZone()
        .ifPresent(az ->
            b.setAccessibleTopology(Topology.newBuilder().putSegments(TOPOLOGY_ZONE_KEY, az)));
    volumeAttachLimit.ifPresent(b::setMaxVolumesPerNode);
    reply(out, b.build());
  }

  private static void checkCapability(boolean present, VolumeCapability cap) {
    if (!present) {
      throw DriverException.invalidArgument("volume_capability is required");
    }
    if (cap.hasBlock()) {
      throw DriverException.invalidArgument(
          "volume_capability access type block is not supported: EFS volumes are file systems"
              + " (use volumeMode: Filesystem)");
    }
    if (cap.getAccessMode().getMode() == VolumeCapability.AccessMode.Mode.UNKNOWN) {
      throw DriverException.invalidArgument("volume_capability.access_mode is required");
    }
  }

  private static boolean readOnlyMode(VolumeCapability cap) {
    VolumeCapability.AccessMode.Mode m = cap.getAccessMode().getMode();
    return m == VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY
        || m == VolumeCapability.AccessMode.Mode.MULTI_NODE_READER_ONLY;
  }

  private static String required(String field, String value) {
    if (value.isBlank()) {
      throw DriverException.invalidArgument("%s is required", field);
    }
    return value;
  }

  /** An absolute, normalised path below the kubelet dir once links are resolved; as given. */
  private Path path(String field, String value) {
    required(field, value);
    Path p = Path.of(value);
    if (!p.isAbsolute() || !p.normalize().equals(p)) {
      throw DriverException.invalidArgument(
          "%s must be an absolute, normalised path, got '%s'", field, value);
    }
    paths.check(field, p, DriverException.Kind.INVALID_ARGUMENT);
    return p;
  }

  /** Work that may fail with an IOException. */
  private interface IoAction {
    void run() throws IOException;
  }

  /**
   * Runs {@code action} under the volume's in-flight guard (ABORTED when busy) and, for mount
   * calls, a slot of the optional concurrent-mount limit; an IOException becomes INTERNAL.
   */
  private void guarded(
      String rpc, String volumeId, boolean mountCall, IoAction action, String... qualifiers) {
    try (InFlight.Lease lease = inFlight.acquire(volumeId, qualifiers);
        MountCall call = mountCall ? mountCall() : () -> {}) {
      action.run();
    } catch (IOException e) {
      throw DriverException.internal(rpc + " " + volumeId + ": " + e.getMessage(), e);
    }
  }

  /** A slot of the optional concurrent-mount-call limit. */
  private interface MountCall extends AutoCloseable {
    @Override
    void close();
  }

  private MountCall mountCall() {
    if (!mountCalls.tryAcquire()) {
      throw DriverException.aborted(
          "The number of concurrent mount calls is %d, which has reached the limit",
          mountCallLimit);
    }
    return mountCalls::release;
  }

  private static <T> void reply(StreamObserver<T> out, T value) {
    out.onNext(value);
    out.onCompleted();
  }
}

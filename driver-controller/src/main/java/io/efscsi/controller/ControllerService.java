package io.efscsi.controller;

import io.efscsi.common.error.DriverException;
import io.efscsi.common.grpc.InFlight;
import io.efscsi.controller.provision.AccessPointProvisioner;
import io.efscsi.controller.provision.VolumeId;
import io.efscsi.csi.v1.ControllerExpandVolumeRequest;
import io.efscsi.csi.v1.ControllerExpandVolumeResponse;
import io.efscsi.csi.v1.ControllerGetCapabilitiesRequest;
import io.efscsi.csi.v1.ControllerGetCapabilitiesResponse;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.ControllerServiceCapability;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.CreateVolumeResponse;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeResponse;
import io.efscsi.csi.v1.Topology;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesResponse;
import io.efscsi.csi.v1.Volume;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * CSI Controller: validates, takes the in-flight lock, delegates to {@link AccessPointProvisioner},
 * maps the answer. Errors are domain exceptions mapped at the edge.
 */
public final class ControllerService extends ControllerGrpc.ControllerImplBase {

  static final String ZONE_KEY = "topology.kubernetes.io/zone";

  private final Supplier<Optional<AccessPointProvisioner>> provisioner;
  private final InFlight inFlight = new InFlight();

  public ControllerService(Supplier<Optional<AccessPointProvisioner>> provisioner) {
    this.provisioner = provisioner;
  }

  @Override
  public void createVolume(CreateVolumeRequest req, StreamObserver<CreateVolumeResponse> out) {
    if (req.getName().isEmpty()) {
      throw DriverException.invalidArgument("Volume name not provided");
    }
    if (req.getVolumeCapabilitiesCount() == 0) {
      throw DriverException.invalidArgument("Volume capabilities not provided");
    }
    VolumeCapabilities.problem(req.getVolumeCapabilitiesList())
        .ifPresent(p -> {
          throw DriverException.invalidArgument("Volume capabilities not supported: %s", p);
        });
    if (req.hasVolumeContentSource()) {
      throw DriverException.invalidArgument(
          "Volume content source (snapshot or clone) is not supported by EFS access points");
    }
    AccessPointProvisioner.Created c;
    try (InFlight.Lease lease = inFlight.acquire(req.getName())) {
      c =
          ready()
              .create(
                  req.getName(),
                  req.getCapacityRange().getRequiredBytes(),
                  req.getParametersMap(),
                  req.getSecretsMap());
    }
    Volume.Builder v =
        Volume.newBuilder()
            .setVolumeId(c.volumeId())
            .setCapacityBytes(c.capacityBytes())
            .putAllVolumeContext(c.context());
    c.zone()
        .ifPresent(z -> v.addAccessibleTopology(Topology.newBuilder().putSegments(ZONE_KEY, z)));
    out.onNext(CreateVolumeResponse.newBuilder().setVolume(v).build());
    out.onCompleted();
  }

  @Override
  public void deleteVolume(DeleteVolumeRequest req, StreamObserver<DeleteVolumeResponse> out) {
    if (req.getVolumeId().isEmpty()) {
      throw DriverException.invalidArgument("Volume ID not provided");
    }
    try (InFlight.Lease lease = inFlight.acquire(req.getVolumeId())) {
      ready().delete(req.getVolumeId(), req.getSecretsMap(), removalWait());
    }
    out.onNext(DeleteVolumeResponse.getDefaultInstance());
    out.onCompleted();
  }

  /**
   * How long DeleteVolume may wait for a root directory's removal: until shortly before the
   * caller's deadline (then ABORTED, and the retry joins the removal), five minutes without one.
   */
  static java.time.Duration removalWait() {
    io.grpc.Deadline d = io.grpc.Context.current().getDeadline();
    if (d == null) {
      return java.time.Duration.ofMinutes(5);
    }
    long ms = d.timeRemaining(java.util.concurrent.TimeUnit.MILLISECONDS);
    return java.time.Duration.ofMillis(Math.max(0, ms - Math.min(1000, ms / 10)));
  }

  @Override
  public void validateVolumeCapabilities(
      ValidateVolumeCapabilitiesRequest req,
      StreamObserver<ValidateVolumeCapabilitiesResponse> out) {
    if (req.getVolumeId().isEmpty()) {
      throw DriverException.invalidArgument("Volume ID not provided");
    }
    if (req.getVolumeCapabilitiesCount() == 0) {
      throw DriverException.invalidArgument("Volume capabilities not provided");
    }
    VolumeId id;
    try {
      id = VolumeId.parse(req.getVolumeId());
    } catch (DriverException e) {
      throw DriverException.notFound("Volume not found, err: %s", e.getMessage());
    }
    if (!ready().exists(id, req.getSecretsMap())) {
      throw DriverException.notFound(
          "Volume %s not found: its %s does not exist",
          req.getVolumeId(),
          id.accessPointId()
              .map(a -> "access point " + a)
              .orElse("file system " + id.fileSystemId()));
    }
    ValidateVolumeCapabilitiesResponse.Builder r = ValidateVolumeCapabilitiesResponse.newBuilder();
    Optional<String> problem = VolumeCapabilities.problem(req.getVolumeCapabilitiesList());
    if (problem.isPresent()) {
      r.setMessage(problem.get());
    } else {
      r.getConfirmedBuilder().addAllVolumeCapabilities(req.getVolumeCapabilitiesList());
    }
    out.onNext(r.build());
    out.onCompleted();
  }

  /**
   * Online expansion of a claim: the new size is recorded and answered (EFS is elastic; no node
   * step, so {@code node_expansion_required} is false).
   */
  @Override
  public void controllerExpandVolume(
      ControllerExpandVolumeRequest req, StreamObserver<ControllerExpandVolumeResponse> out) {
    if (req.getVolumeId().isEmpty()) {
      throw DriverException.invalidArgument("Volume ID not provided");
    }
    if (!req.hasCapacityRange()) {
      throw DriverException.invalidArgument("Capacity range not provided");
    }
    long required = req.getCapacityRange().getRequiredBytes();
    long limit = req.getCapacityRange().getLimitBytes();
    if (required <= 0 && limit <= 0) {
      throw DriverException.invalidArgument(
          "Capacity range invalid: neither required_bytes nor limit_bytes is set");
    }
    if (required < 0 || limit < 0 || (limit > 0 && required > limit)) {
      throw DriverException.invalidArgument(
          "Capacity range invalid: required_bytes %d, limit_bytes %d", required, limit);
    }
    VolumeId id;
    try {
      id = VolumeId.parse(req.getVolumeId());
    } catch (DriverException e) {
      throw DriverException.notFound("Volume not found, err: %s", e.getMessage());
    }
    long capacity;
    try (InFlight.Lease lease = inFlight.acquire(req.getVolumeId())) {
      capacity =
          ready()
              .expand(req.getVolumeId(), id, required > 0 ? required : limit, req.getSecretsMap());
    }
    out.onNext(
        ControllerExpandVolumeResponse.newBuilder()
            .setCapacityBytes(capacity)
            .setNodeExpansionRequired(false)
            .build());
    out.onCompleted();
  }

  @Override
  public void controllerGetCapabilities(
      ControllerGetCapabilitiesRequest req, StreamObserver<ControllerGetCapabilitiesResponse> out) {
    out.onNext(
        ControllerGetCapabilitiesResponse.newBuilder()
            .addCapabilities(
                ControllerServiceCapability.newBuilder()
                    .setRpc(
                        ControllerServiceCapability.RPC
                            .newBuilder()
                            .setType(ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME)))
            .addCapabilities(
                ControllerServiceCapability.newBuilder()
                    .setRpc(
                        ControllerServiceCapability.RPC
                            .newBuilder()
                            .setType(ControllerServiceCapability.RPC.Type.EXPAND_VOLUME)))
            .build());
    out.onCompleted();
  }

  private AccessPointProvisioner ready() {
    return provisioner
        .get()
        .orElseThrow(() ->
            DriverException.unavailable(
                "the controller's AWS client is not ready yet (see Probe and the log); retry"));
  }
}

package io.efscsi.common.identity;

import com.google.protobuf.BoolValue;
import io.efscsi.common.BuildInfo;
import io.efscsi.csi.v1.GetPluginCapabilitiesRequest;
import io.efscsi.csi.v1.GetPluginCapabilitiesResponse;
import io.efscsi.csi.v1.GetPluginInfoRequest;
import io.efscsi.csi.v1.GetPluginInfoResponse;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.PluginCapability;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.csi.v1.ProbeResponse;
import io.grpc.stub.StreamObserver;
import java.util.EnumSet;
import java.util.Set;

/** CSI Identity: plugin name and version, capabilities for this process's mode, and Probe. */
public final class IdentityService extends IdentityGrpc.IdentityImplBase {

  /** The CSI driver name; part of the drop-in contract. */
  public static final String DRIVER_NAME = "efs.csi.aws.com";

  /** What a plugin process offers. */
  public enum Capability {
    CONTROLLER_SERVICE,
    VOLUME_ACCESSIBILITY_CONSTRAINTS,
    /** ControllerExpandVolume while the volume is in use (no node step). */
    ONLINE_VOLUME_EXPANSION
  }

  private final GetPluginInfoResponse info;
  private final GetPluginCapabilitiesResponse capabilities;
  private final Readiness readiness;

  public IdentityService(BuildInfo build, Set<Capability> capabilities, Readiness readiness) {
    this.info =
        GetPluginInfoResponse.newBuilder()
            .setName(DRIVER_NAME)
            .setVendorVersion(build.version())
            .build();
    GetPluginCapabilitiesResponse.Builder caps = GetPluginCapabilitiesResponse.newBuilder();
    EnumSet<Capability> sorted = EnumSet.noneOf(Capability.class);
    sorted.addAll(capabilities);
    for (Capability c : sorted) {
      PluginCapability.Builder cap = PluginCapability.newBuilder();
      switch (c) {
        case CONTROLLER_SERVICE ->
            cap.setService(
                PluginCapability.Service.newBuilder()
                    .setType(PluginCapability.Service.Type.CONTROLLER_SERVICE));
        case VOLUME_ACCESSIBILITY_CONSTRAINTS ->
            cap.setService(
                PluginCapability.Service.newBuilder()
                    .setType(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS));
        case ONLINE_VOLUME_EXPANSION ->
            cap.setVolumeExpansion(
                PluginCapability.VolumeExpansion.newBuilder()
                    .setType(PluginCapability.VolumeExpansion.Type.ONLINE));
      }
      caps.addCapabilities(cap);
    }
    this.capabilities = caps.build();
    this.readiness = readiness;
  }

  @Override
  public void getPluginInfo(
      GetPluginInfoRequest request, StreamObserver<GetPluginInfoResponse> responseObserver) {
    responseObserver.onNext(info);
    responseObserver.onCompleted();
  }

  @Override
  public void getPluginCapabilities(
      GetPluginCapabilitiesRequest request,
      StreamObserver<GetPluginCapabilitiesResponse> responseObserver) {
    responseObserver.onNext(capabilities);
    responseObserver.onCompleted();
  }

  @Override
  public void probe(ProbeRequest request, StreamObserver<ProbeResponse> responseObserver) {
    boolean ready = readiness.evaluate().ready();
    responseObserver.onNext(ProbeResponse.newBuilder().setReady(BoolValue.of(ready)).build());
    responseObserver.onCompleted();
  }
}

package io.efscsi.launcher;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.csi.v1.ControllerGetCapabilitiesRequest;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.CreateVolumeResponse;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.StatusRuntimeException;
import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The demo's provisioning part: the calls csi-provisioner makes, against the EFS emulator. */
final class DemoProvisioning {

  static final VolumeCapability RWX =
      VolumeCapability.newBuilder()
          .setMount(VolumeCapability.MountVolume.getDefaultInstance())
          .setAccessMode(
              VolumeCapability.AccessMode.newBuilder()
                  .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
          .build();

  private DemoProvisioning() {}

  static boolean run(
      CsiChannels.Client client, String fileSystem, EfsEmulator efs, PrintStream say) {
    var controller = ControllerGrpc.newBlockingStub(client.channel());
    say.printf(
        "-> ControllerGetCapabilities: %s%n",
        controller
            .withDeadlineAfter(5, TimeUnit.SECONDS)
            .controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance())
            .getCapabilitiesList()
            .stream()
            .map(c -> c.getRpc().getType().name())
            .toList());
    VolumeCapability rwx = RWX;
    CreateVolumeRequest create =
        CreateVolumeRequest.newBuilder()
            .setName("pvc-0b6c1f7e-demo")
            .addVolumeCapabilities(rwx)
            .putAllParameters(
                Map.of(
                    "provisioningMode", "efs-ap",
                    "fileSystemId", fileSystem,
                    "directoryPerms", "700",
                    "basePath", "/dynamic",
                    "csi.storage.k8s.io/pvc/name", "data",
                    "csi.storage.k8s.io/pvc/namespace", "demo"))
            .build();
    try {
      CreateVolumeResponse created =
          controller.withDeadlineAfter(30, TimeUnit.SECONDS).createVolume(create);
      String id = created.getVolume().getVolumeId();
      say.printf("-> CreateVolume %s: volume_id=%s%n", create.getName(), id);
      say.printf(
          "   access point: %s%n",
          efs.accessPoint(id.substring(id.lastIndexOf(':') + 1)).orElseThrow());
      CreateVolumeResponse again =
          controller.withDeadlineAfter(30, TimeUnit.SECONDS).createVolume(create);
      say.printf(
          "-> CreateVolume again (a retry): same id=%s%n",
          again.getVolume().getVolumeId().equals(id));
      boolean confirmed =
          controller
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .validateVolumeCapabilities(
                  ValidateVolumeCapabilitiesRequest.newBuilder()
                      .setVolumeId(id)
                      .addVolumeCapabilities(rwx)
                      .build())
              .hasConfirmed();
      say.printf("-> ValidateVolumeCapabilities: confirmed=%s%n", confirmed);
      controller
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
      say.printf(
          "-> DeleteVolume: access points left on %s: %d%n",
          fileSystem, efs.accessPointCount(fileSystem));
      try {
        controller
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .createVolume(create.toBuilder().putParameters("gidRangeStart", "60000").build());
      } catch (StatusRuntimeException e) {
        say.printf("-> CreateVolume with a bad parameter: %s%n", e.getStatus());
      }
      say.printf("   EFS API calls made: %s%n", efs.calls());
      return true;
    } catch (StatusRuntimeException e) {
      say.println("!! provisioning failed: " + e.getStatus());
      return false;
    }
  }
}

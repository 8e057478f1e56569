package io.efscsi.launcher;

import io.efscsi.common.DriverRuntime;
import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.GetPluginCapabilitiesRequest;
import io.efscsi.csi.v1.GetPluginInfoRequest;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeGetInfoRequest;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.efscsi.emulator.EfsEmulator;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code efs-csi aot-training} (build time only): the classes the driver loads when it serves,
 * recorded for the AOT cache. The driver in {@code all} mode on a temporary socket against the EFS
 * emulator, driven through Identity, Controller and the node's read-only calls; silent, its log
 * lines go to stderr only at WARN (bin/efs-csi shows them only when the run fails).
 */
final class AotTraining {

  private AotTraining() {}

  static int run(PrintStream err) {
    Logging.quiet();
    Path tmp = null;
    try {
      tmp = Files.createTempDirectory("efs-csi-train-");
      Path socket = tmp.resolve("csi.sock");
      try (EfsEmulator efs = EfsEmulator.start();
          DriverRuntime runtime =
              DemoDriver.start(
                  socket,
                  efs,
                  DemoDriver.node(tmp, "none", "efs-csi-train", List.of("false"), 2049));
          CsiChannels.Client client = CsiChannels.open(new Endpoint.Unix(socket))) {
        drive(client, efs.createFileSystem());
      }
      return 0;
    } catch (Exception e) {
      err.println("efs-csi aot-training failed: " + e);
      return 1;
    } finally {
      Demo.deleteTree(tmp);
    }
  }

  private static void drive(CsiChannels.Client client, String fileSystem) {
    var identity =
        IdentityGrpc.newBlockingStub(client.channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
    identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance());
    var node = NodeGrpc.newBlockingStub(client.channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    node.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance());
    node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
    var controller =
        ControllerGrpc.newBlockingStub(client.channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    String id =
        controller
            .createVolume(
                CreateVolumeRequest.newBuilder()
                    .setName("pvc-training")
                    .addVolumeCapabilities(DemoDriver.RWX)
                    .putAllParameters(
                        Map.of(
                            "provisioningMode", "efs-ap",
                            "fileSystemId", fileSystem,
                            "directoryPerms", "700",
                            "gidRangeStart", "1000",
                            "gidRangeEnd", "2000"))
                    .build())
            .getVolume()
            .getVolumeId();
    controller.validateVolumeCapabilities(
        ValidateVolumeCapabilitiesRequest.newBuilder()
            .setVolumeId(id)
            .addVolumeCapabilities(DemoDriver.RWX)
            .build());
    controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
  }
}

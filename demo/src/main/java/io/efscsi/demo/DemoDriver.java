package io.efscsi.demo;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.DriverRuntime;
import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.controller.ControllerOptions;
import io.efscsi.controller.ControllerPlugin;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.emulator.EfsEmulator;
import io.efscsi.node.NodeOptions;
import io.efscsi.node.NodePlugin;
import io.efscsi.node.SupervisorOptions;
import io.efscsi.supervisor.SupervisorConfig;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * The driver as the demo and the build's training run start it: {@code all} mode in this process on
 * a unix socket in a temporary directory, the controller's AWS SDK client pointed at the EFS
 * emulator (region us-east-1, fixed credentials, instance metadata off).
 */
final class DemoDriver {

  static final String REGION = "us-east-1";
  static final VolumeCapability RWX =
      VolumeCapability.newBuilder()
          .setMount(VolumeCapability.MountVolume.getDefaultInstance())
          .setAccessMode(
              VolumeCapability.AccessMode.newBuilder()
                  .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
          .build();

  private DemoDriver() {}

  /**
   * A CreateVolume of an access point on {@code fileSystem} (mode 700, RWX), with {@code more}
   * parameters.
   */
  static CreateVolumeRequest efsAp(String name, String fileSystem, Map<String, String> more) {
    return CreateVolumeRequest.newBuilder()
        .setName(name)
        .addVolumeCapabilities(RWX)
        .putParameters("provisioningMode", "efs-ap")
        .putParameters("fileSystemId", fileSystem)
        .putParameters("directoryPerms", "700")
        .putAllParameters(more)
        .build();
  }

  /**
   * Node settings: state in {@code tmp/state}, {@code tmp/kubelet} as the kubelet's root dir (where
   * the demo stages and publishes), proxies' cgroups ({@code cgroupMode}: auto, none, …) under
   * {@code cgroupParent}, the given NFS mount command and mount target port; absent NFS mounts are
   * tolerated for an hour (a stand-in mount is a bind mount, which the supervisor does not count as
   * the proxy's).
   */
  static NodeOptions node(
      Path tmp, String cgroupMode, String cgroupParent, List<String> mount, int mountTargetPort) {
    Path state = tmp.resolve("state");
    SupervisorOptions defaults = SupervisorOptions.defaults(state);
    SupervisorConfig c = defaults.config();
    SupervisorConfig config =
        c.withTimings(
            Duration.ofSeconds(1), Duration.ofHours(1), c.absentReads(), Duration.ofSeconds(2));
    return new NodeOptions(
        state,
        tmp.resolve("kubelet"),
        true,
        Duration.ofMinutes(240),
        5,
        OptionalInt.empty(),
        OptionalInt.empty(),
        false,
        Duration.ofSeconds(30),
        new SupervisorOptions(config, cgroupMode, defaults.cgroupRoot(), cgroupParent),
        mount,
        mountTargetPort,
        io.efscsi.node.volume.MountDefaults.DEFAULT,
        io.efscsi.node.takeover.TakeoverOptions.DISABLED);
  }

  /**
   * Starts the driver on {@code socket}; returns once Probe says ready (at most 30 s, times {@link
   * Demo#PATIENCE}).
   */
  static DriverRuntime start(Path socket, EfsEmulator efs, NodeOptions node) throws Exception {
    Endpoint endpoint = new Endpoint.Unix(socket);
    CommonOptions common =
        new CommonOptions(
            endpoint,
            Optional.empty(),
            Optional.empty(),
            Optional.empty(),
            2,
            Duration.ofSeconds(5));
    ControllerOptions controller =
        new ControllerOptions(Optional.of(REGION), "demo:true", false, true);
    // The SDK's default credentials chain reads these first; instance metadata stays off.
    System.setProperty("aws.accessKeyId", "AKIDEFSCSIDEMO");
    System.setProperty("aws.secretAccessKey", "demo-not-a-secret");
    System.setProperty("aws.disableEc2Metadata", "true");
    DriverRuntime runtime =
        DriverRuntime.start(
            common,
            BuildInfo.load(),
            List.of(
                new ControllerPlugin(
                    controller,
                    Map.of(
                        "AWS_ENDPOINT_URL_EFS", efs.endpoint().toString(),
                        "AWS_ENDPOINT_URL_STS", efs.endpoint().toString(),
                        "AWS_EC2_METADATA_DISABLED", "true")),
                new NodePlugin(
                    node,
                    Map.of(
                        "CSI_NODE_NAME", "demo-node",
                        "AWS_REGION", REGION,
                        "AWS_EC2_METADATA_DISABLED", "true"))));
    try (CsiChannels.Client client = CsiChannels.open(endpoint)) {
      var identity = IdentityGrpc.newBlockingStub(client.channel());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30L * Demo.PATIENCE);
      while (!ready(identity)) {
        if (System.nanoTime() > deadline) {
          String why = runtime.readiness().evaluate().reasons().toString();
          runtime.close();
          throw new IllegalStateException("the driver did not become ready: " + why);
        }
        Thread.sleep(100);
      }
    }
    return runtime;
  }

  /**
   * One Probe: ready or not. A probe that times out or finds no server yet is "not yet" (a JVM
   * under emulation can take longer than one probe's deadline to answer its first call), any other
   * failure is the driver's answer and ends the demo.
   */
  private static boolean ready(IdentityGrpc.IdentityBlockingStub identity) {
    try {
      return identity
          .withDeadlineAfter(5L * Demo.PATIENCE, TimeUnit.SECONDS)
          .probe(ProbeRequest.getDefaultInstance())
          .getReady()
          .getValue();
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.UNAVAILABLE) {
        return false;
      }
      throw e;
    }
  }
}

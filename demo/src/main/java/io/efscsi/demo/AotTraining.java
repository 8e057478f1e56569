package io.efscsi.demo;

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
import io.efscsi.csi.v1.NodeGetVolumeStatsRequest;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.StatusRuntimeException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code efs-csi aot-training node|controller CONFIG} (build time only): records the classes one
 * plugin loads when it serves, for that mode's AOT cache. The plugin runs as its own process
 * through {@code bin/efs-csi} in AOT record mode, so its cache holds what that mode loads and
 * nothing else (not the other mode's, not the EFS emulator's nor this driving client's: one cache
 * for everything made every plugin map and touch some 70 MiB). This process drives it over its
 * socket (Identity, the mode's calls, a rejected call, a /metrics scrape) against the EFS emulator,
 * then stops it with SIGTERM, on which its JVM writes {@code CONFIG}. Silent unless it fails.
 */
final class AotTraining {

  static final String USAGE = "usage: efs-csi aot-training node|controller CONFIG";

  private AotTraining() {}

  static int run(List<String> args, PrintStream err) {
    DemoLogging.quiet();
    if (args.size() != 2 || !List.of("node", "controller").contains(args.get(0))) {
      err.println(USAGE);
      return 2;
    }
    String mode = args.get(0);
    Path config = Path.of(args.get(1)).toAbsolutePath();
    Path home = Path.of(System.getProperty("efscsi.home", "."));
    Path tmp = null;
    try {
      tmp = Files.createTempDirectory("efs-csi-train-");
      Files.deleteIfExists(config);
      train(home, mode, config, tmp);
      if (!Files.isRegularFile(config) || Files.size(config) == 0) {
        throw new IllegalStateException(
            "the "
                + mode
                + " plugin wrote no AOT configuration to "
                + config
                + ": "
                + Files.readString(tmp.resolve("plugin.log")));
      }
      return 0;
    } catch (Exception e) {
      err.println("efs-csi aot-training " + mode + " failed: " + e);
      return 1;
    } finally {
      Demo.deleteTree(tmp);
    }
  }

  private static void train(Path home, String mode, Path config, Path tmp) throws Exception {
    Path socket = tmp.resolve("csi.sock");
    Path log = tmp.resolve("plugin.log");
    int httpPort = PackagedPlugin.freePort();
    try (EfsEmulator efs = EfsEmulator.start()) {
      Map<String, String> env = new HashMap<>(PackagedPlugin.emulatorEnv(efs));
      env.put("EFS_CSI_JAVA_OPTS", "-XX:AOTMode=record -XX:AOTConfiguration=" + config);
      env.put("EFS_CSI_AOT", "off"); // recording cannot map a cache, even one already built
      env.put("CSI_NODE_NAME", "aot-training");
      List<String> flags =
          mode.equals("node")
              ? List.of(
                  "--endpoint=unix://" + socket,
                  "--http-endpoint=127.0.0.1:" + httpPort,
                  "--state-dir=" + tmp.resolve("state"),
                  // the stats call below names a path below it: the not-mounted path is trained
                  "--kubelet-root-dir=/nonexistent",
                  "--proxy-cgroup=none")
              : List.of(
                  "--endpoint=unix://" + socket,
                  "--http-endpoint=127.0.0.1:" + httpPort,
                  "--region=" + DemoDriver.REGION);
      Process plugin = PackagedPlugin.start(home, mode, flags, env, log);
      try (CsiChannels.Client client = CsiChannels.open(new Endpoint.Unix(socket))) {
        PackagedPlugin.awaitReady(client, plugin, log);
        identity(client);
        if (mode.equals("node")) {
          node(client);
        } else {
          controller(client, efs.createFileSystem());
        }
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.discarding());
      } finally {
        plugin.destroy(); // SIGTERM: its JVM writes the configuration as it exits
        if (!plugin.waitFor(60, TimeUnit.SECONDS)) {
          plugin.destroyForcibly();
          throw new IllegalStateException("the " + mode + " plugin did not stop on SIGTERM");
        }
      }
    }
  }

  private static void identity(CsiChannels.Client client) {
    var identity =
        IdentityGrpc.newBlockingStub(client.channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
    identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance());
  }

  private static void node(CsiChannels.Client client) {
    var node = NodeGrpc.newBlockingStub(client.channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    node.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance());
    node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
    // the error paths a kubelet meets first: a stage without a capability, stats of a path that
    // is not a volume
    rejected(() ->
        node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId("fs-0").build()));
    rejected(() ->
        node.nodeGetVolumeStats(
            NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId("fs-0")
                .setVolumePath("/nonexistent/aot-training")
                .build()));
  }

  private static void controller(CsiChannels.Client client, String fileSystem) {
    var controller =
        ControllerGrpc.newBlockingStub(client.channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    String id =
        controller
            .createVolume(
                DemoDriver.efsAp(
                    "pvc-training",
                    fileSystem,
                    Map.of("gidRangeStart", "1000", "gidRangeEnd", "2000")))
            .getVolume()
            .getVolumeId();
    controller.validateVolumeCapabilities(
        ValidateVolumeCapabilitiesRequest.newBuilder()
            .setVolumeId(id)
            .addVolumeCapabilities(DemoDriver.RWX)
            .build());
    controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    rejected(() -> controller.createVolume(CreateVolumeRequest.newBuilder().setName("").build()));
  }

  private static void rejected(Runnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException expected) {
      // the error path is what is being recorded
    }
  }
}

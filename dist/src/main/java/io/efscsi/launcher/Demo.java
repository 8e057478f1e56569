package io.efscsi.launcher;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.DriverRuntime;
import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.config.UsageException;
import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.controller.ControllerOptions;
import io.efscsi.controller.ControllerPlugin;
import io.efscsi.csi.v1.GetPluginCapabilitiesRequest;
import io.efscsi.csi.v1.GetPluginCapabilitiesResponse;
import io.efscsi.csi.v1.GetPluginInfoRequest;
import io.efscsi.csi.v1.GetPluginInfoResponse;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.PluginCapability;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.emulator.EfsEmulator;
import io.efscsi.node.NodeOptions;
import io.efscsi.node.NodePlugin;
import io.efscsi.node.SupervisorOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code efs-csi demo}: the driver in {@code all} mode on a temporary unix socket, driven by a
 * built-in CSI client the way kubelet and the sidecars drive it, printing each call and answer.
 * Embedded defaults: region us-east-1, a temporary state directory, and an EFS emulator on
 * 127.0.0.1 with one file system, which the controller's real AWS SDK client talks to; nothing
 * outside the temp directory and loopback is touched.
 */
final class Demo {

  private Demo() {}

  static int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    boolean quiet = false;
    for (String a : args) {
      if (a.equals("--quiet")) {
        quiet = true;
      } else {
        throw new UsageException("unknown flag '" + a + "' for demo; accepted flags: --quiet");
      }
    }
    if (quiet) {
      Logging.quiet();
    } else {
      Logging.configure(2);
    }
    PrintStream say = quiet ? new PrintStream(PrintStream.nullOutputStream()) : out;
    Path tmp = null;
    try {
      tmp = Files.createTempDirectory("efs-csi-demo-");
      return drive(tmp, say);
    } catch (Exception e) {
      err.println("efs-csi demo failed: " + e);
      return 1;
    } finally {
      deleteTree(tmp);
    }
  }

  private static int drive(Path tmp, PrintStream say) throws Exception {
    Path socket = tmp.resolve("csi.sock");
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
        new ControllerOptions(Optional.of("us-east-1"), "demo:true", false, true);
    // The SDK's default credentials chain reads these first; instance metadata stays off.
    System.setProperty("aws.accessKeyId", "AKIDEFSCSIDEMO");
    System.setProperty("aws.secretAccessKey", "demo-not-a-secret");
    System.setProperty("aws.disableEc2Metadata", "true");
    NodeOptions node =
        new NodeOptions(
            tmp.resolve("state"),
            false,
            Duration.ofMinutes(240),
            5,
            OptionalInt.empty(),
            OptionalInt.empty(),
            false,
            Duration.ofSeconds(30),
            SupervisorOptions.defaults(tmp.resolve("state")),
            List.of("mount", "-t", "nfs4"),
            2049,
            io.efscsi.node.volume.MountDefaults.DEFAULT,
            io.efscsi.node.takeover.TakeoverOptions.DISABLED);
    say.println(
        "== starting efs-csi " + BuildInfo.load().version() + " in 'all' mode on " + endpoint);
    long t0 = System.nanoTime();
    try (EfsEmulator efs = EfsEmulator.start();
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
                            "AWS_REGION", "us-east-1",
                            "AWS_EC2_METADATA_DISABLED", "true"))));
        CsiChannels.Client client = CsiChannels.open(endpoint)) {
      String fileSystem = efs.createFileSystem();
      say.printf("   EFS emulator on %s with file system %s%n", efs.endpoint(), fileSystem);
      say.printf("   socket ready after %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      var identity = IdentityGrpc.newBlockingStub(client.channel());

      GetPluginInfoResponse info =
          identity
              .withDeadlineAfter(5, TimeUnit.SECONDS)
              .getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
      say.printf(
          "-> GetPluginInfo: name=%s vendor_version=%s%n", info.getName(), info.getVendorVersion());

      GetPluginCapabilitiesResponse caps =
          identity
              .withDeadlineAfter(5, TimeUnit.SECONDS)
              .getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance());
      say.printf(
          "-> GetPluginCapabilities: %s%n",
          caps.getCapabilitiesList().stream()
              .map(PluginCapability::getService)
              .map(s -> s.getType().name())
              .toList());

      boolean ready = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      int probes = 0;
      while (!ready && System.nanoTime() < deadline) {
        ready =
            identity
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .probe(ProbeRequest.getDefaultInstance())
                .getReady()
                .getValue();
        probes++;
        say.printf("-> Probe #%d: ready=%s%n", probes, ready);
        if (!ready) {
          Thread.sleep(200);
        }
      }
      if (!ready) {
        say.println(
            "!! the driver did not become ready: " + runtime.readiness().evaluate().reasons());
        return 1;
      }
      if (!DemoProvisioning.run(client, fileSystem, efs, say)) {
        return 1;
      }
      say.println("== stopping: socket is removed, in-flight calls would be allowed to finish");
    }
    say.printf("   socket exists after stop: %s%n", Files.exists(socket));
    say.println("== demo done");
    return 0;
  }

  /** Removes a temporary tree, best effort. */
  static void deleteTree(Path dir) {
    if (dir == null) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // best effort: a temp dir
    }
  }
}

package io.efscsi.launcher;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.emulator.EfsEmulator;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code efs-csi benchmark-controller [volumes]}: the packaged controller as its own process (heap
 * capped with -Xmx128m) on a unix socket, against the EFS emulator in this process. Creates and
 * deletes {@code volumes} volumes one after the other on a file system that already has 1000 access
 * points, and prints CreateVolume/DeleteVolume latency percentiles (client side, over the socket),
 * EFS API calls per CreateVolume, and the controller's heap after it has loaded a file system of
 * 10000 access points.
 */
final class ControllerBenchmark {

  private ControllerBenchmark() {}

  static int run(List<String> args, PrintStream out) throws Exception {
    int volumes = args.isEmpty() ? 1000 : Integer.parseInt(args.getFirst());
    Path home = Path.of(System.getProperty("efscsi.home", "."));
    Path tmp = Files.createTempDirectory("efs-csi-bench-");
    Path socket = tmp.resolve("controller.sock");
    int httpPort = PackagedPlugin.freePort();
    try (EfsEmulator efs = EfsEmulator.start()) {
      String fs = efs.createFileSystem();
      for (int i = 0; i < 1000; i++) {
        efs.seedAccessPoint(fs, 50_000 + 2L * i, 50_000 + 2L * i, "/seed-" + i);
      }
      Path log = tmp.resolve("controller.log");
      Process controller =
          PackagedPlugin.start(
              home,
              "controller",
              List.of(
                  "--endpoint=unix://" + socket,
                  "--http-endpoint=127.0.0.1:" + httpPort,
                  "--region=" + DemoDriver.REGION),
              withHeap(PackagedPlugin.emulatorEnv(efs)),
              log);
      try (CsiChannels.Client client = CsiChannels.open(new Endpoint.Unix(socket))) {
        PackagedPlugin.awaitReady(client, controller, log);
        var stub = ControllerGrpc.newBlockingStub(client.channel());
        efs.resetCalls();
        long[] create = new long[volumes];
        long[] delete = new long[volumes];
        for (int i = 0; i < volumes; i++) {
          CreateVolumeRequest r = request("pvc-bench-" + i, fs);
          long t0 = System.nanoTime();
          String id =
              stub.withDeadlineAfter(30, TimeUnit.SECONDS)
                  .createVolume(r)
                  .getVolume()
                  .getVolumeId();
          long t1 = System.nanoTime();
          stub.withDeadlineAfter(30, TimeUnit.SECONDS)
              .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
          delete[i] = System.nanoTime() - t1;
          create[i] = t1 - t0;
        }
        Map<String, Long> calls = efs.calls();
        long createCalls =
            calls.values().stream().mapToLong(Long::longValue).sum()
                - calls.getOrDefault("DeleteAccessPoint", 0L);
        out.printf(
            Locale.ROOT,
            "controller benchmark: %d CreateVolume + DeleteVolume, sequential,"
                + " on a file system with 1000 access points already present%n",
            volumes);
        out.printf(
            Locale.ROOT,
            "  CreateVolume  p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms%n",
            pct(create, 50),
            pct(create, 99),
            pct(create, 100));
        out.printf(
            Locale.ROOT,
            "  DeleteVolume  p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms%n",
            pct(delete, 50),
            pct(delete, 99),
            pct(delete, 100));
        out.printf(
            Locale.ROOT,
            "  EFS API calls per CreateVolume: %.3f (%s, listing of the"
                + " 1000 existing access points included)%n",
            (double) createCalls / volumes,
            calls);

        String big = efs.createFileSystem();
        for (int i = 0; i < 9_999; i++) {
          efs.seedAccessPoint(big, 100_000 + i, 100_000 + i, "/big-" + i);
        }
        stub.withDeadlineAfter(60, TimeUnit.SECONDS).createVolume(request("pvc-big", big));
        out.printf(
            Locale.ROOT,
            "  controller heap after GC with %d access points known: %.1f MiB" + " (-Xmx128m)%n",
            efs.accessPointCount(big) + efs.accessPointCount(fs),
            heapAfterGc(controller, httpPort));
      } finally {
        controller.destroy();
        controller.waitFor(20, TimeUnit.SECONDS);
      }
    } finally {
      Demo.deleteTree(tmp); // the build's training run uses this benchmark too
    }
    return 0;
  }

  private static CreateVolumeRequest request(String name, String fs) {
    return CreateVolumeRequest.newBuilder()
        .setName(name)
        .addVolumeCapabilities(DemoDriver.RWX)
        .putAllParameters(
            Map.of("provisioningMode", "efs-ap", "fileSystemId", fs, "directoryPerms", "700"))
        .build();
  }

  private static Map<String, String> withHeap(Map<String, String> env) {
    Map<String, String> out = new java.util.HashMap<>(env);
    out.put("EFS_CSI_JAVA_OPTS", "-Xmx128m");
    return out;
  }

  /** Full GC in the controller (jcmd), then its heap in use from /metrics, in MiB. */
  private static double heapAfterGc(Process controller, int httpPort) throws Exception {
    Path java = Path.of(ProcessHandle.current().info().command().orElseThrow());
    Process jcmd =
        new ProcessBuilder(
                java.resolveSibling("jcmd").toString(), Long.toString(controller.pid()), "GC.run")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    jcmd.waitFor(30, TimeUnit.SECONDS);
    String metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    double bytes = 0;
    List<String> lines = new ArrayList<>(metrics.lines().toList());
    for (String line : lines) {
      if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
        bytes += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return bytes / (1024 * 1024);
  }

  private static double pct(long[] nanos, int p) {
    long[] s = nanos.clone();
    Arrays.sort(s);
    int i = Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1);
    return s[Math.max(0, i)] / 1e6;
  }
}

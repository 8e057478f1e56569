package io.efscsi.demo;

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
 * capped with -Xmx128m) on a unix socket, against the EFS emulator in this process. For each of
 * three file systems, with 100, 1,000 and 10,000 access points already present, creates and deletes
 * {@code volumes} volumes one after the other, and prints CreateVolume/DeleteVolume latency
 * percentiles (client side, over the socket, after 200 unmeasured ones on a file system of their
 * own) and EFS API calls per CreateVolume; then the controller's heap after a full GC, once it
 * knows all of those access points.
 *
 * <p>Half of each file system's access points hold every other GID of the default range
 * (50000-60000), so the allocator searches among them; the other half are other tenants' (GIDs
 * outside the range). 10,000 is the default per-file-system limit, so that file system runs as one
 * whose quota was raised: the emulator's limit and {@code --max-access-points-per-file-system} are
 * {@value #RAISED_QUOTA}.
 */
final class ControllerBenchmark {

  /** Access points present before the first CreateVolume, one file system each. */
  static final int[] PRESENT = {100, 1_000, 10_000};

  static final int RAISED_QUOTA = 20_000;

  private ControllerBenchmark() {}

  static int run(List<String> args, PrintStream out) throws Exception {
    int volumes = args.isEmpty() ? 1000 : Integer.parseInt(args.getFirst());
    Path home = Path.of(System.getProperty("efscsi.home", "."));
    Path tmp = Files.createTempDirectory("efs-csi-bench-");
    Path socket = tmp.resolve("controller.sock");
    int httpPort = PackagedPlugin.freePort();
    try (EfsEmulator efs = EfsEmulator.start()) {
      efs.accessPointLimit(RAISED_QUOTA);
      String[] fileSystems = new String[PRESENT.length];
      for (int f = 0; f < PRESENT.length; f++) {
        fileSystems[f] = efs.createFileSystem();
        seed(efs, fileSystems[f], PRESENT[f]);
      }
      Path log = tmp.resolve("controller.log");
      Process controller =
          PackagedPlugin.start(
              home,
              "controller",
              List.of(
                  "--endpoint=unix://" + socket,
                  "--http-endpoint=127.0.0.1:" + httpPort,
                  "--region=" + DemoDriver.REGION,
                  "--max-access-points-per-file-system=" + RAISED_QUOTA),
              withHeap(PackagedPlugin.emulatorEnv(efs)),
              log);
      try (CsiChannels.Client client = CsiChannels.open(new Endpoint.Unix(socket))) {
        PackagedPlugin.awaitReady(client, controller, log);
        var stub = ControllerGrpc.newBlockingStub(client.channel());
        // warm-up on a file system of its own, so that the first measured size does not carry
        // the JIT's and the connection's first calls
        String scratch = efs.createFileSystem();
        for (int i = 0; i < Math.min(volumes, 200); i++) {
          createAndDelete(stub, DemoDriver.efsAp("pvc-warm-up-" + i, scratch, Map.of()));
        }
        out.printf(
            Locale.ROOT,
            "controller benchmark: %d CreateVolume + DeleteVolume per file system, sequential,"
                + " client side over the socket (ms)%n",
            volumes);
        out.printf(
            Locale.ROOT,
            "  %-18s %-28s %-28s %s%n",
            "APs present",
            "CreateVolume p50/p99/max",
            "DeleteVolume p50/p99/max",
            "EFS calls per create");
        for (int f = 0; f < PRESENT.length; f++) {
          efs.resetCalls();
          long[] create = new long[volumes];
          long[] delete = new long[volumes];
          for (int i = 0; i < volumes; i++) {
            long[] took =
                createAndDelete(
                    stub, DemoDriver.efsAp("pvc-bench-" + f + "-" + i, fileSystems[f], Map.of()));
            create[i] = took[0];
            delete[i] = took[1];
          }
          Map<String, Long> calls = efs.calls();
          long createCalls =
              calls.values().stream().mapToLong(Long::longValue).sum()
                  - calls.getOrDefault("DeleteAccessPoint", 0L);
          out.printf(
              Locale.ROOT,
              "  %-18s %-28s %-28s %.3f %s%n",
              String.format(Locale.ROOT, "%,d", PRESENT[f]),
              percentiles(create),
              percentiles(delete),
              (double) createCalls / volumes,
              calls);
        }
        int known = 0;
        for (String fs : fileSystems) {
          known += efs.accessPointCount(fs);
        }
        out.printf(
            Locale.ROOT,
            "  controller heap after GC with %d access points known: %.1f MiB (-Xmx128m)%n",
            known,
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

  /**
   * {@code count} access points on {@code fs}: the first half on every other GID of the default
   * range, the rest with GIDs of another tenant's range.
   */
  private static void seed(EfsEmulator efs, String fs, int count) {
    for (int i = 0; i < count; i++) {
      long id = i < count / 2 ? 50_000 + 2L * i : 200_000 + i;
      efs.seedAccessPoint(fs, id, id, "/seed-" + i);
    }
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

  /** One CreateVolume, then DeleteVolume of what it made: the nanoseconds of each. */
  private static long[] createAndDelete(
      ControllerGrpc.ControllerBlockingStub stub, CreateVolumeRequest r) {
    long t0 = System.nanoTime();
    String id =
        stub.withDeadlineAfter(30, TimeUnit.SECONDS).createVolume(r).getVolume().getVolumeId();
    long t1 = System.nanoTime();
    stub.withDeadlineAfter(30, TimeUnit.SECONDS)
        .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    return new long[] {t1 - t0, System.nanoTime() - t1};
  }

  /** "p50 / p99 / max" in milliseconds. */
  private static String percentiles(long[] nanos) {
    return String.format(
        Locale.ROOT, "%.2f / %.2f / %.2f", pct(nanos, 50), pct(nanos, 99), pct(nanos, 100));
  }

  private static double pct(long[] nanos, int p) {
    long[] s = nanos.clone();
    Arrays.sort(s);
    int i = Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1);
    return s[Math.max(0, i)] / 1e6;
  }
}

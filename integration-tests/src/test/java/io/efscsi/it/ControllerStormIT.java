package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 1,000 CreateVolume calls at once on one file system (a StatefulSet scaled up, a namespace of
 * claims applied) against the packaged controller, with the emulator throttling the EFS API as AWS
 * does: a token bucket of requests per second. Each first answer must be OK or a code the
 * provisioner retries; retried as csi-provisioner retries, every claim ends with exactly one access
 * point, its own GID, and the controller stays within the memory limit the chart gives it. Then the
 * 1,000 DeleteVolume calls at once, under the same throttling, leave no access point.
 */
class ControllerStormIT {

  static final int CLAIMS = Integer.getInteger("efscsi.storm.claims", 1000);

  /** The chart's default controller memory limit (320Mi). */
  static final long MEMORY_LIMIT = 320L << 20;

  static final Set<Status.Code> RETRYABLE =
      Set.of(
          Status.Code.UNAVAILABLE,
          Status.Code.ABORTED,
          Status.Code.DEADLINE_EXCEEDED,
          Status.Code.RESOURCE_EXHAUSTED);

  @TempDir Path tmp;
  EfsEmulator emu;
  String fs;
  PackagedDriver driver;
  CsiChannels.Client client;

  @BeforeEach
  void start() throws Exception {
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
    int httpPort;
    try (ServerSocket s = new ServerSocket(0)) {
      httpPort = s.getLocalPort();
    }
    Path socket = tmp.resolve("controller.sock");
    driver =
        ControllerIT.startController(
            socket,
            Path.of("target/it-logs/ControllerStormIT.log"),
            emu,
            httpPort,
            Map.of("EFS_CSI_MEMORY_LIMIT", Long.toString(MEMORY_LIMIT)),
            List.of());
    client = CsiChannels.open(new Endpoint.Unix(socket));
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (driver != null) {
      assertEquals(0, driver.terminate(java.time.Duration.ofSeconds(20)), driver.logText());
    }
    emu.close();
  }

  ControllerGrpc.ControllerBlockingStub controller() {
    return ControllerGrpc.newBlockingStub(client.channel()).withDeadlineAfter(60, TimeUnit.SECONDS);
  }

  /** First answers by code, and the retries it took until every call was OK. */
  record Storm(Map<Status.Code, Integer> firstAnswers, long retries, long[] sortedNanos) {}

  Storm storm(List<Callable<Object>> calls) throws Exception {
    Map<Status.Code, Integer> first = new EnumMap<>(Status.Code.class);
    AtomicLong retries = new AtomicLong();
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Long>> done = new ArrayList<>();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (Callable<Object> call : calls) {
        done.add(
            pool.submit(() -> {
              go.await();
              long t0 = System.nanoTime();
              long pause = 100;
              for (int attempt = 0; ; attempt++) {
                try {
                  call.call();
                  if (attempt == 0) {
                    synchronized (first) {
                      first.merge(Status.Code.OK, 1, Integer::sum);
                    }
                  }
                  return System.nanoTime() - t0;
                } catch (StatusRuntimeException e) {
                  Status.Code c = e.getStatus().getCode();
                  if (attempt == 0) {
                    synchronized (first) {
                      first.merge(c, 1, Integer::sum);
                    }
                  }
                  if (!RETRYABLE.contains(c)) {
                    throw new AssertionError("not retryable: " + e.getStatus(), e);
                  }
                  retries.incrementAndGet();
                  // csi-provisioner: exponential back-off per claim (here capped at 5 s)
                  Thread.sleep(pause + (long) (Math.random() * pause));
                  pause = Math.min(5000, pause * 2);
                }
              }
            }));
      }
      go.countDown();
      long[] nanos = new long[done.size()];
      for (int i = 0; i < nanos.length; i++) {
        nanos[i] = done.get(i).get(10, TimeUnit.MINUTES);
      }
      Arrays.sort(nanos);
      return new Storm(first, retries.get(), nanos);
    }
  }

  @SuppressWarnings("unchecked")
  long gid(String volumeId) {
    Map<String, Object> ap =
        emu.accessPoint(volumeId.substring(volumeId.lastIndexOf(':') + 1)).orElseThrow();
    return ((Number) ((Map<String, Object>) ap.get("PosixUser")).get("Gid")).longValue();
  }

  /** The controller's resident set now and at its peak (VmRSS, VmHWM), in bytes. */
  long[] rss() throws IOException {
    long now = 0;
    long peak = 0;
    for (String line : Files.readAllLines(Path.of("/proc/" + driver.process.pid() + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        now = Long.parseLong(line.replaceAll("\\D", "")) << 10;
      } else if (line.startsWith("VmHWM:")) {
        peak = Long.parseLong(line.replaceAll("\\D", "")) << 10;
      }
    }
    return new long[] {now, peak};
  }

  @Test
  void aThousandCreatesAtOnceUnderThrottlingEndWithOneAccessPointAndGidEach() throws Exception {
    long idle = rss()[0];
    // ~ what AWS grants an account's EFS control plane calls, scaled down: 50 requests a second
    emu.faults().rateLimit(50, 50);
    String[] ids = new String[CLAIMS];
    List<Callable<Object>> creates = new ArrayList<>();
    for (int i = 0; i < CLAIMS; i++) {
      int claim = i;
      CreateVolumeRequest r = claim(i);
      creates.add(() -> ids[claim] = controller().createVolume(r).getVolume().getVolumeId());
    }
    Storm up = storm(creates);
    long[] afterCreates = rss();
    long throttledCreates = emu.faults().throttled();

    Set<String> distinct = new HashSet<>(Arrays.asList(ids));
    assertEquals(CLAIMS, distinct.size(), "one volume per claim");
    assertEquals(CLAIMS, emu.accessPointCount(fs), "no duplicate access point");
    Set<Long> gids = new HashSet<>();
    for (String id : ids) {
      gids.add(gid(id));
    }
    assertEquals(CLAIMS, gids.size(), "every access point its own GID");
    assertTrue(throttledCreates > 0, "the emulator throttled");
    // the same claims again (the provisioner after a restart): the same volumes, nothing new
    for (int i = 0; i < CLAIMS; i += 97) {
      emu.faults().clear();
      CreateVolumeRequest again = claim(i);
      assertEquals(ids[i], controller().createVolume(again).getVolume().getVolumeId());
    }
    assertEquals(CLAIMS, emu.accessPointCount(fs));

    emu.faults().rateLimit(50, 50);
    List<Callable<Object>> deletes = new ArrayList<>();
    for (String id : ids) {
      deletes.add(() ->
          controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
    }
    Storm down = storm(deletes);
    emu.faults().clear();
    long[] end = rss();
    assertEquals(0, emu.accessPointCount(fs), "every access point deleted");
    assertTrue(
        end[1] < MEMORY_LIMIT,
        "peak RSS " + (end[1] >> 20) + " MiB within the " + (MEMORY_LIMIT >> 20) + " MiB limit");
    System.out.printf(
        Locale.ROOT,
        "ControllerStormIT: %d CreateVolume at once, EFS API limited to 50 requests/s: first answers"
            + " %s, %d retries, %d throttled API requests; all done: p50 %.1f s, p99 %.1f s, max"
            + " %.1f s; %d access points, %d distinct GIDs; %d DeleteVolume at once: first answers"
            + " %s, %d retries, p99 %.1f s, 0 access points left; controller RSS idle %d MiB, after"
            + " the creates %d MiB, peak %d MiB (limit %d MiB)%n",
        CLAIMS,
        up.firstAnswers(),
        up.retries(),
        throttledCreates,
        seconds(up, 50),
        seconds(up, 99),
        seconds(up, 100),
        CLAIMS,
        gids.size(),
        CLAIMS,
        down.firstAnswers(),
        down.retries(),
        seconds(down, 99),
        idle >> 20,
        afterCreates[0] >> 20,
        end[1] >> 20,
        MEMORY_LIMIT >> 20);
  }

  /** Claim {@code i}'s CreateVolume: GIDs from a range just large enough for every claim. */
  CreateVolumeRequest claim(int i) {
    return CreateVolumeRequest.newBuilder()
        .setName(String.format(Locale.ROOT, "pvc-storm-%04d", i))
        .addVolumeCapabilities(ControllerIT.RWX)
        .putAllParameters(
            Map.of(
                "provisioningMode", "efs-ap",
                "fileSystemId", fs,
                "directoryPerms", "700",
                "gidRangeStart", "1000",
                "gidRangeEnd", Integer.toString(1000 + CLAIMS)))
        .build();
  }

  static double seconds(Storm s, int pct) {
    long[] n = s.sortedNanos();
    return n[Math.min(n.length - 1, n.length * pct / 100)] / 1e9;
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged controller as a process, driven over its unix socket the way csi-provisioner drives
 * it, with its real AWS SDK client talking to the EFS emulator on loopback.
 */
class ControllerIT {

  static final VolumeCapability RWX =
      VolumeCapability.newBuilder()
          .setMount(VolumeCapability.MountVolume.getDefaultInstance())
          .setAccessMode(
              VolumeCapability.AccessMode.newBuilder()
                  .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
          .build();

  @TempDir Path tmp;
  EfsEmulator emu;
  String fs;
  PackagedDriver driver;
  CsiChannels.Client client;
  int httpPort;

  @BeforeEach
  void emulator() throws Exception {
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
  }

  void start(TestInfo info, String... extra) throws Exception {
    Map<String, String> env = PackagedDriver.cleanEnv();
    env.put("AWS_ENDPOINT_URL_EFS", emu.endpoint().toString());
    env.put("AWS_ENDPOINT_URL_STS", emu.endpoint().toString());
    env.put("AWS_ACCESS_KEY_ID", "AKIDEFSCSIIT");
    env.put("AWS_SECRET_ACCESS_KEY", "it-not-a-secret");
    env.put("AWS_REGION", "us-east-1");
    try (ServerSocket s = new ServerSocket(0)) {
      httpPort = s.getLocalPort();
    }
    Path socket = tmp.resolve("controller.sock");
    List<String> args =
        new ArrayList<>(
            List.of(
                "controller",
                "--endpoint=unix://" + socket,
                "--http-endpoint=127.0.0.1:" + httpPort));
    args.addAll(List.of(extra));
    driver =
        PackagedDriver.start(
                socket,
                Path.of(
                    "target/it-logs/ControllerIT-"
                        + info.getTestMethod().orElseThrow().getName()
                        + ".log"),
                env,
                args.toArray(String[]::new))
            .awaitSocket(Duration.ofSeconds(30));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!driver.identity().probe(ProbeRequest.getDefaultInstance()).getReady().getValue()) {
      assertTrue(System.nanoTime() < deadline, "controller not ready:\n" + driver.logText());
      Thread.sleep(50);
    }
    client = CsiChannels.open(new Endpoint.Unix(socket));
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (driver != null) {
      assertEquals(0, driver.terminate(Duration.ofSeconds(20)), driver.logText());
    }
    emu.close();
  }

  ControllerGrpc.ControllerBlockingStub controller(long seconds) {
    return ControllerGrpc.newBlockingStub(client.channel())
        .withDeadlineAfter(seconds, TimeUnit.SECONDS);
  }

  CreateVolumeRequest create(String name, String fileSystem, Map<String, String> secrets) {
    return CreateVolumeRequest.newBuilder()
        .setName(name)
        .addVolumeCapabilities(RWX)
        .putAllParameters(
            Map.of(
                "provisioningMode", "efs-ap", "fileSystemId", fileSystem, "directoryPerms", "700"))
        .putAllSecrets(secrets)
        .build();
  }

  /**
   * Calls CreateVolume until it succeeds, as csi-provisioner does: retryable codes are retried with
   * a growing pause (up to 1 s) for up to two minutes.
   */
  String createWithRetries(CreateVolumeRequest r, long deadlineSeconds)
      throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    long pause = 50;
    while (true) {
      try {
        return controller(deadlineSeconds).createVolume(r).getVolume().getVolumeId();
      } catch (StatusRuntimeException e) {
        Status.Code c = e.getStatus().getCode();
        if (System.nanoTime() > giveUp
            || !(c == Status.Code.UNAVAILABLE
                || c == Status.Code.ABORTED
                || c == Status.Code.DEADLINE_EXCEEDED)) {
          throw e;
        }
        Thread.sleep(pause);
        pause = Math.min(1000, pause * 2);
      }
    }
  }

  @SuppressWarnings("unchecked")
  long gid(String volumeId) {
    Map<String, Object> ap =
        emu.accessPoint(volumeId.substring(volumeId.lastIndexOf(':') + 1)).orElseThrow();
    return ((Number) ((Map<String, Object>) ap.get("PosixUser")).get("Gid")).longValue();
  }

  @Test
  void createAndDeleteAreIdempotentUnderClientRetries(TestInfo info) throws Exception {
    start(info);
    emu.faults().latency(Duration.ofMillis(1500));
    // The first attempts time out on the client side while the controller is still working.
    String id = createWithRetries(create("pvc-slow", fs, Map.of()), 1);
    emu.faults().clear();
    assertEquals(
        id,
        controller(10).createVolume(create("pvc-slow", fs, Map.of())).getVolume().getVolumeId());
    assertEquals(1, emu.accessPointCount(fs));
    controller(10).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    controller(10).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    assertEquals(0, emu.accessPointCount(fs));
  }

  @Test
  void twoHundredConcurrentCreatesOnOneFileSystemGetDistinctGids(TestInfo info) throws Exception {
    start(info);
    Set<Long> gids = ConcurrentHashMap.newKeySet();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String>> ids = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        CreateVolumeRequest r = create("pvc-c" + i, fs, Map.of());
        ids.add(pool.submit(() -> createWithRetries(r, 30)));
      }
      for (Future<String> f : ids) {
        gids.add(gid(f.get()));
      }
    }
    assertEquals(200, gids.size());
    assertEquals(200, emu.accessPointCount(fs));
    assertEquals(200, emu.calls("CreateAccessPoint"));
  }

  @Test
  void accessPointLimitIsResourceExhausted(TestInfo info) throws Exception {
    start(info, "--max-access-points-per-file-system=3");
    for (int i = 0; i < 3; i++) {
      controller(10).createVolume(create("pvc-l" + i, fs, Map.of()));
    }
    StatusRuntimeException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusRuntimeException.class,
            () -> controller(10).createVolume(create("pvc-l3", fs, Map.of())));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("access point limit of 3"), e.getMessage());
    assertEquals(3, emu.accessPointCount(fs));
  }

  @Test
  void aThrottlingStormIsSurvivedWithoutOrphansOrDuplicateGids(TestInfo info) throws Exception {
    start(info);
    emu.faults().throttleShare(0.4);
    Set<Long> gids = ConcurrentHashMap.newKeySet();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String>> ids = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        CreateVolumeRequest r = create("pvc-t" + i, fs, Map.of());
        ids.add(pool.submit(() -> createWithRetries(r, 60)));
      }
      for (Future<String> f : ids) {
        gids.add(gid(f.get()));
      }
    }
    emu.faults().clear();
    assertEquals(30, gids.size());
    assertEquals(30, emu.accessPointCount(fs));
    String metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertTrue(metrics.contains("aws_efs_csi_api_request_throttles_total{"), metrics);
    assertTrue(metrics.contains("aws_efs_csi_api_request_duration_seconds_bucket{"), metrics);
  }

  @Test
  void crossAccountRoleProvisionsInTheOtherAccount(TestInfo info) throws Exception {
    start(info);
    String other = emu.createFileSystem("444455556666", Optional.empty());
    emu.addMountTarget(other, "us-east-1a", "10.9.0.5");
    emu.addRole("arn:aws:iam::444455556666:role/efs-csi", "444455556666", Optional.empty());
    Map<String, String> secrets =
        new HashMap<>(Map.of("awsRoleArn", "arn:aws:iam::444455556666:role/efs-csi"));
    var r = controller(30).createVolume(create("pvc-x", other, secrets));
    assertEquals(
        Map.of("mounttargetipmap", "{\"us-east-1a\":\"10.9.0.5\"}"),
        r.getVolume().getVolumeContextMap());
    controller(30).createVolume(create("pvc-y", other, secrets));
    assertEquals(1, emu.calls("AssumeRole"));
    assertEquals(2, emu.accessPointCount(other));
    controller(30)
        .deleteVolume(
            DeleteVolumeRequest.newBuilder()
                .setVolumeId(r.getVolume().getVolumeId())
                .putAllSecrets(secrets)
                .build());
    assertEquals(1, emu.accessPointCount(other));
    StatusRuntimeException denied =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusRuntimeException.class,
            () ->
                controller(30)
                    .createVolume(
                        create(
                            "pvc-z",
                            other,
                            Map.of("awsRoleArn", "arn:aws:iam::444455556666:role/nope"))));
    assertEquals(Status.Code.UNAUTHENTICATED, denied.getStatus().getCode());
  }
}

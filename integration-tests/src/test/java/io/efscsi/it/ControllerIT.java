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
    start(info, Map.of(), extra);
  }

  void start(TestInfo info, Map<String, String> extraEnv, String... extra) throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      httpPort = s.getLocalPort();
    }
    Path socket = tmp.resolve("controller.sock");
    driver =
        startController(
            socket,
            Path.of(
                "target/it-logs/ControllerIT-"
                    + info.getTestMethod().orElseThrow().getName()
                    + ".log"),
            emu,
            httpPort,
            extraEnv,
            List.of(extra));
    client = CsiChannels.open(new Endpoint.Unix(socket));
  }

  /**
   * The packaged controller on {@code socket}, its AWS SDK pointed at the emulator, metrics on
   * {@code httpPort}; returns once Probe says ready.
   */
  static PackagedDriver startController(
      Path socket,
      Path log,
      EfsEmulator emu,
      int httpPort,
      Map<String, String> extraEnv,
      List<String> extra)
      throws Exception {
    Map<String, String> env = PackagedDriver.cleanEnv();
    env.putAll(extraEnv);
    env.put("AWS_ENDPOINT_URL_EFS", emu.endpoint().toString());
    env.put("AWS_ENDPOINT_URL_STS", emu.endpoint().toString());
    env.put("AWS_ENDPOINT_URL_S3FILES", emu.endpoint().toString());
    env.put("AWS_ACCESS_KEY_ID", "AKIDEFSCSIIT");
    env.put("AWS_SECRET_ACCESS_KEY", "it-not-a-secret");
    env.put("AWS_REGION", "us-east-1");
    List<String> args =
        new ArrayList<>(
            List.of(
                "controller",
                "--endpoint=unix://" + socket,
                "--http-endpoint=127.0.0.1:" + httpPort));
    args.addAll(extra);
    PackagedDriver driver =
        PackagedDriver.start(socket, log, env, args.toArray(String[]::new))
            .awaitSocket(Duration.ofSeconds(30));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!driver.identity().probe(ProbeRequest.getDefaultInstance()).getReady().getValue()) {
      assertTrue(System.nanoTime() < deadline, "controller not ready:\n" + driver.logText());
      Thread.sleep(50);
    }
    return driver;
  }

  /** Whether the proxies' default cgroup parent was there before the test (see stop()). */
  private final boolean cgroupParentBefore =
      HostCleanup.cgroupParentExists(HostCleanup.DEFAULT_CGROUP_PARENT);

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (driver != null) {
      assertEquals(0, driver.terminate(Duration.ofSeconds(20)), driver.logText());
    }
    // --delete-access-point-root-dir runs a supervisor, which makes the default cgroup parent
    HostCleanup.removeDefaultCgroupParentIfNew(cgroupParentBefore);
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

  /** s3files-ap through the packaged controller: its S3 Files client reaches the endpoint set. */
  @Test
  void s3filesVolumesAreCreatedAndDeletedThroughTheS3FilesApi(TestInfo info) throws Exception {
    start(info);
    String s3fs = emu.createS3FilesFileSystem();
    CreateVolumeRequest r = create("pvc-s3", s3fs, Map.of());
    r = r.toBuilder().putParameters("provisioningMode", "s3files-ap").build();
    emu.faults().throttleNext(2);
    String id = createWithRetries(r, 10);
    assertTrue(id.matches("s3files:" + s3fs + "::fsap-[0-9a-f]{17}"), id);
    assertEquals(1, emu.s3filesAccessPointCount(s3fs));
    assertEquals(0, emu.calls("CreateAccessPoint"), "nothing went to the EFS API");
    controller(10).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    controller(10).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    assertEquals(0, emu.s3filesAccessPointCount(s3fs));
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

  /**
   * {@code --delete-access-point-root-dir} through the packaged controller: the file system's root
   * is staged through a real proxy (its own supervisor and state dir) and the mount command, the
   * directory is removed by rm in a child, and mount, proxy and mount point go away again. The
   * mount command binds a directory standing for the file system (this kernel has no NFS client;
   * the kernel VM suite runs mount.nfs4).
   */
  @Test
  void deleteAccessPointRootDirRemovesOnlyThatDirectoryThroughAProxyAndAMount(TestInfo info)
      throws Exception {
    Path fsRoot = java.nio.file.Files.createDirectories(tmp.resolve("fs-root"));
    Path outside = java.nio.file.Files.createDirectories(tmp.resolve("outside/x"));
    java.nio.file.Files.writeString(outside.resolve("keep"), "not on this file system");
    java.nio.file.Files.createSymbolicLink(fsRoot.resolve("link"), outside.getParent());
    Path state = tmp.resolve("state");
    Path mountLog = tmp.resolve("mounts.log");
    emu.addMountTarget(fs, "us-east-1a", "127.0.0.1");
    start(
        info,
        Map.of("FAKE_NFS_ROOT", fsRoot.toString(), "FAKE_NFS_LOG", mountLog.toString()),
        cleanupFlags(tmp, state));

    CreateVolumeRequest.Builder r = create("pvc-rd1", fs, Map.of()).toBuilder();
    r.putParameters("basePath", "dyn");
    String one = controller(10).createVolume(r.build()).getVolume().getVolumeId();
    String two =
        controller(10).createVolume(r.setName("pvc-rd2").build()).getVolume().getVolumeId();
    for (String pv : List.of("pvc-rd1", "pvc-rd2")) {
      Path d = java.nio.file.Files.createDirectories(fsRoot.resolve("dyn/" + pv + "/a/b"));
      java.nio.file.Files.writeString(d.resolve("data"), "written by a pod of " + pv);
    }

    long t0 = System.nanoTime();
    controller(60).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(one).build());
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println("DeleteVolume with --delete-access-point-root-dir: " + ms + " ms");
    assertTrue(!java.nio.file.Files.exists(fsRoot.resolve("dyn/pvc-rd1")), driver.logText());
    assertTrue(java.nio.file.Files.exists(fsRoot.resolve("dyn/pvc-rd2/a/b/data")));
    assertTrue(emu.accessPoint(one.substring(one.lastIndexOf(':') + 1)).isEmpty());
    List<String> mounts = java.nio.file.Files.readAllLines(mountLog);
    assertEquals(1, mounts.size(), mounts.toString());
    String apOne = one.substring(one.lastIndexOf(':') + 1);
    assertTrue(
        mounts
            .getFirst()
            .matches(
                "-o \\S*port=\\d+\\S* 127\\.0\\.0\\.1:/ "
                    + state.toRealPath()
                    + "/controller/mnt/"
                    + apOne),
        mounts.getFirst());
    assertNothingLeft(state);

    // Refused: an access point rooted at / (nothing deleted, no mount made, the access point kept).
    String slash = emu.seedAccessPoint(fs, 0, 0, "/");
    deleteRefused(fs + "::" + slash);
    assertTrue(emu.accessPoint(slash).isPresent());
    assertEquals(1, java.nio.file.Files.readAllLines(mountLog).size());

    // Refused after mounting: a symbolic link on the way out of the file system is not followed.
    String linked = emu.seedAccessPoint(fs, 0, 0, "/link/x");
    StatusRuntimeException link = deleteRefused(fs + "::" + linked);
    assertTrue(link.getStatus().getDescription().contains("symbolic link"), link.getMessage());
    assertTrue(java.nio.file.Files.exists(outside.resolve("keep")));
    assertTrue(emu.accessPoint(linked).isPresent());
    assertNothingLeft(state);

    controller(60).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(two).build());
    assertTrue(!java.nio.file.Files.exists(fsRoot.resolve("dyn/pvc-rd2")));
    assertTrue(java.nio.file.Files.exists(fsRoot.resolve("dyn")), "the basePath stays");
    assertNothingLeft(state);
  }

  /**
   * {@code --delete-access-point-root-dir} and what its mount path needs: a state dir, free ports,
   * and the fake mount command (copied into {@code tmp}), which binds {@code FAKE_NFS_ROOT}.
   */
  static String[] cleanupFlags(Path tmp, Path state) throws Exception {
    Path script = tmp.resolve("fake-nfs-mount");
    try (var in = ControllerIT.class.getResourceAsStream("/fake-nfs-mount")) {
      java.nio.file.Files.write(script, in.readAllBytes());
    }
    java.nio.file.Files.setPosixFilePermissions(
        script, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    return new String[] {
      "--delete-access-point-root-dir",
      "--state-dir=" + state,
      "--nfs-mount-command=" + script,
      "--proxy-port-range=" + SupervisorIT.freeRange(4),
      "--mount-target-port=" + SupervisorIT.freeRange(1).split("-")[0]
    };
  }

  /** A DeleteVolume that must fail with FAILED_PRECONDITION. */
  StatusRuntimeException deleteRefused(String volumeId) {
    StatusRuntimeException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusRuntimeException.class,
            () ->
                controller(60)
                    .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), e.getMessage());
    return e;
  }

  /** No mount below the state dir, no mount point, no proxy record or process. */
  static void assertNothingLeft(Path state) throws Exception {
    String real = state.toRealPath().toString();
    List<String> mounted =
        java.nio.file.Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
            .filter(l -> l.contains(real))
            .toList();
    assertEquals(List.of(), mounted);
    Path mnt = state.resolve("controller/mnt");
    try (var s = java.nio.file.Files.list(mnt)) {
      assertEquals(List.of(), s.toList());
    }
    try (var s = java.nio.file.Files.list(state.resolve("controller/proxies"))) {
      assertEquals(
          List.of(), s.filter(p -> p.toString().endsWith(".json")).toList(), "proxy records");
    }
    long proxies =
        ProcessHandle.allProcesses()
            .filter(p ->
                p.info().arguments().map(a -> String.join(" ", a).contains(real)).orElse(false))
            .count();
    assertEquals(0, proxies, "proxy processes of the controller's state dir");
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

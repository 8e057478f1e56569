package io.efscsi.controller;

import static io.efscsi.controller.ControllerServiceTest.RWX;
import static io.efscsi.controller.ControllerServiceTest.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.grpc.StatusMapper;
import io.efscsi.controller.cloud.Clouds;
import io.efscsi.controller.provision.AccessPointProvisioner;
import io.efscsi.controller.provision.FileSystemIds;
import io.efscsi.controller.provision.Tags;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.CreateVolumeResponse;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeResponse;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.efscsi.csi.v1.ValidateVolumeCapabilitiesResponse;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * csi-sanity-style checks of {@code provisioningMode: s3files-ap}: the Controller service over our
 * S3 Files REST client (the SDK's HTTP client, SigV4 signer and retry strategy), talking HTTP to
 * the emulator's S3 Files API (which refuses requests not signed for service {@code s3files}).
 */
class S3FilesControllerTest {

  EfsEmulator emu;
  SimpleMeterRegistry registry;
  List<Clouds> clouds = new ArrayList<>();
  ControllerService service;
  String fs;

  @BeforeEach
  void start() throws Exception {
    emu = EfsEmulator.start();
    fs = emu.createS3FilesFileSystem();
    registry = new SimpleMeterRegistry();
    service = service();
  }

  ControllerService service() {
    Clouds c = ControllerServiceTest.emulatorClouds(emu, registry);
    clouds.add(c);
    AccessPointProvisioner p =
        new AccessPointProvisioner(
            c, FileSystemIds.literalOnly(), Tags.parse(""), 10_000, Duration.ofMinutes(5));
    return new ControllerService(() -> Optional.of(p));
  }

  @AfterEach
  void stop() {
    clouds.forEach(Clouds::close);
    emu.close();
  }

  Map<String, String> params(String... kv) {
    return ControllerServiceTest.paramsOf("s3files-ap", fs, "750", kv);
  }

  CreateVolumeResponse createVolume(CreateVolumeRequest r) {
    return ControllerServiceTest.createVolume(service, r);
  }

  void deleteVolume(String id) {
    ControllerServiceTest.<DeleteVolumeResponse>call(
        o -> service.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build(), o));
  }

  ValidateVolumeCapabilitiesResponse validate(String id) {
    return ControllerServiceTest.<ValidateVolumeCapabilitiesResponse>call(o ->
        service.validateVolumeCapabilities(
            ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId(id)
                .addVolumeCapabilities(RWX)
                .build(),
            o));
  }

  StatusRuntimeException createFails(CreateVolumeRequest r) {
    return assertThrows(StatusRuntimeException.class, () -> createVolume(r));
  }

  static String apId(String volumeId) {
    return volumeId.substring(volumeId.lastIndexOf(':') + 1);
  }

  @SuppressWarnings("unchecked")
  long gid(String volumeId) {
    Map<String, Object> ap = emu.s3filesAccessPoint(apId(volumeId)).orElseThrow();
    return ((Number) ((Map<String, Object>) ap.get("PosixUser")).get("Gid")).longValue();
  }

  @Test
  void createsAnS3FilesAccessPointAndReturnsAnS3FilesHandle() {
    CreateVolumeResponse r =
        createVolume(create("pvc-1", params("csi.storage.k8s.io/pv/name", "pvc-1")));
    String id = r.getVolume().getVolumeId();
    assertTrue(id.matches("s3files:" + fs + "::fsap-[0-9a-f]{17}"), id);
    assertEquals(Map.of(), r.getVolume().getVolumeContextMap());
    assertEquals(0, r.getVolume().getAccessibleTopologyCount());
    Map<String, Object> ap = emu.s3filesAccessPoint(apId(id)).orElseThrow();
    assertEquals("pvc-1", ap.get("ClientToken"));
    assertEquals(
        Map.of(
            "Path",
            "/pvc-1",
            "CreationInfo",
            Map.of("OwnerUid", 50000L, "OwnerGid", 50000L, "Permissions", "750")),
        ap.get("RootDirectory"));
    assertEquals(
        Set.of(
            Map.of("Key", "efs.csi.aws.com/cluster", "Value", "true"),
            Map.of("Key", "kubernetes.io/created-for/pv/name", "Value", "pvc-1")),
        Set.copyOf((List<?>) ap.get("Tags")));
    assertEquals(
        Map.of("S3Files.ListAccessPoints", 1L, "S3Files.CreateAccessPoint", 1L), emu.calls());
    assertEquals(0, emu.accessPointCount(fs), "nothing reached the EFS API");

    emu.resetCalls();
    assertEquals(id, createVolume(create("pvc-1", params())).getVolume().getVolumeId());
    assertEquals(Map.of(), emu.calls(), "a retry is answered from the inventory");
    assertEquals(
        1,
        registry
            .get("aws_efs_csi_api_request_duration")
            .tags("service", "s3files", "request", "CreateAccessPoint")
            .timer()
            .count());
  }

  @Test
  void fixedIdsAndPathPatternsAsForEfs() {
    String id =
        createVolume(
                create(
                    "pvc-2",
                    params(
                        "uid", "1001",
                        "gid", "1002",
                        "basePath", "/k8s",
                        "subPathPattern", "${.PVC.namespace}/${.PVC.name}",
                        "ensureUniqueDirectory", "false",
                        "enableTagging", "false",
                        "csi.storage.k8s.io/pvc/name", "data",
                        "csi.storage.k8s.io/pvc/namespace", "team-a")))
            .getVolume()
            .getVolumeId();
    Map<String, Object> ap = emu.s3filesAccessPoint(apId(id)).orElseThrow();
    assertEquals(Map.of("Uid", 1001L, "Gid", 1002L), ap.get("PosixUser"));
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) ap.get("RootDirectory");
    assertEquals("/k8s/team-a/data", root.get("Path"));
    assertEquals(List.of(), ap.get("Tags"));
  }

  @Test
  void deleteVolumeDeletesTheAccessPointAndNotFoundIsSuccess() {
    String id = createVolume(create("pvc-3", params())).getVolume().getVolumeId();
    deleteVolume(id);
    assertTrue(emu.s3filesAccessPoint(apId(id)).isEmpty());
    assertEquals(1, emu.calls("S3Files.DeleteAccessPoint"));
    deleteVolume(id);
    deleteVolume("s3files:" + fs + "::fsap-0123456789abcdef0");
    deleteVolume("s3files:" + fs);
    deleteVolume("s3files:not-a-handle");
    assertEquals(3, emu.calls("S3Files.DeleteAccessPoint"));
    // After the delete, the name gets a new access point.
    String again = createVolume(create("pvc-3", params())).getVolume().getVolumeId();
    assertFalse(again.equals(id));
  }

  @Test
  void validateVolumeCapabilitiesFindsTheAccessPointByListing() {
    String id = createVolume(create("pvc-4", params())).getVolume().getVolumeId();
    emu.resetCalls();
    ValidateVolumeCapabilitiesResponse ok = validate(id);
    assertTrue(ok.hasConfirmed());
    assertEquals(Map.of("S3Files.ListAccessPoints", 1L), emu.calls());
    deleteVolume(id);
    StatusRuntimeException gone = assertThrows(StatusRuntimeException.class, () -> validate(id));
    assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode());
  }

  @Test
  void whatTheGoDriverRefusesForS3FilesIsRefusedBeforeAnyCall() {
    StatusRuntimeException reuse = createFails(create("pvc-5", params("reuseAccessPoint", "true")));
    assertEquals(Status.Code.INVALID_ARGUMENT, reuse.getStatus().getCode());
    assertEquals(
        "Parameter reuseAccessPoint is only supported for EFS file systems, not supported for"
            + " s3files file systems",
        reuse.getStatus().getDescription());
    StatusRuntimeException az = createFails(create("pvc-5", params("az", "us-east-1a")));
    assertEquals(
        "Parameter az is only supported for EFS file systems, not supported for s3files file"
            + " systems",
        az.getStatus().getDescription());
    assertEquals(Map.of(), emu.calls());
  }

  @Test
  void aMissingFileSystemIsInvalidArgumentAndEfsFileSystemsAreNotS3Files() {
    StatusRuntimeException e =
        createFails(create("pvc-6", params("fileSystemId", "fs-0123456789abcdef0")));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().startsWith("File System does not exist"),
        e.getStatus().getDescription());
    String efs = emu.createFileSystem();
    assertEquals(
        Status.Code.INVALID_ARGUMENT,
        createFails(create("pvc-6", params("fileSystemId", efs))).getStatus().getCode());
  }

  @Test
  void throttlingIsRetriedAndCountedServerErrorsBeyondRetriesAreUnavailable() {
    emu.faults().throttleNext(2);
    createVolume(create("pvc-7", params("uid", "1", "gid", "1")));
    // The first call (the file system's listing) was throttled twice, then answered.
    assertEquals(3, emu.calls("S3Files.ListAccessPoints"));
    assertEquals(1, emu.calls("S3Files.CreateAccessPoint"));
    assertEquals(
        2.0,
        registry
            .get("aws_efs_csi_api_request_throttles")
            .tags("service", "s3files", "request", "ListAccessPoints")
            .counter()
            .count());
    emu.faults().failNext(100);
    StatusRuntimeException e = createFails(create("pvc-8", params("uid", "1", "gid", "1")));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertEquals(1 + 5, emu.calls("S3Files.CreateAccessPoint"), "5 attempts");
    assertEquals(
        1.0,
        registry
            .get("aws_efs_csi_api_request_errors")
            .tags("service", "s3files", "code", "InternalServerException")
            .counter()
            .count());
    emu.faults().clear().deny("AKIDEFSCSITEST");
    StatusRuntimeException denied = createFails(create("pvc-9", params("uid", "1", "gid", "1")));
    assertEquals(Status.Code.UNAUTHENTICATED, denied.getStatus().getCode());
    assertTrue(
        denied.getStatus().getDescription().startsWith("Access Denied. Please ensure"),
        denied.getStatus().getDescription());
  }

  @Test
  void concurrentCreatesGetDistinctGids() throws Exception {
    Set<Long> gids = ConcurrentHashMap.newKeySet();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String>> ids = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        String name = "pvc-" + i;
        ids.add(pool.submit(() -> createVolume(create(name, params())).getVolume().getVolumeId()));
      }
      for (Future<String> f : ids) {
        gids.add(gid(f.get()));
      }
    }
    assertEquals(50, gids.size());
    assertEquals(50, emu.s3filesAccessPointCount(fs));
    assertEquals(1, emu.calls("S3Files.ListAccessPoints"));
  }

  /**
   * A controller that restarts after its CreateAccessPoint succeeded but before CreateVolume
   * answered: the listing has no client tokens, its GID choice differs, S3 Files answers
   * ConflictException naming the access point, and that one (its root is this volume's) is the
   * answer.
   */
  @Test
  void aRestartedControllerAdoptsItsEarlierAccessPoint() {
    String first = createVolume(create("pvc-10", params())).getVolume().getVolumeId();
    service = service();
    emu.resetCalls();
    String again = createVolume(create("pvc-10", params())).getVolume().getVolumeId();
    assertEquals(first, again);
    assertEquals(1, emu.s3filesAccessPointCount(fs));
    assertEquals(1, emu.calls("S3Files.CreateAccessPoint"));
  }

  @Test
  void zoneAffinityListsFileSystemsAndGivesNoTopology() {
    CreateVolumeResponse r = createVolume(create("pvc-11", params("enforceZoneAffinity", "true")));
    assertEquals(0, r.getVolume().getAccessibleTopologyCount());
    assertEquals(1, emu.calls("S3Files.ListFileSystems"));
  }

  @Test
  void s3filesFsTypeIsAccepted() {
    CreateVolumeRequest r =
        CreateVolumeRequest.newBuilder(create("pvc-12", params()))
            .setVolumeCapabilities(
                0,
                RWX.toBuilder().setMount(RWX.getMount().toBuilder().setFsType("s3files")).build())
            .build();
    assertTrue(createVolume(r).getVolume().getVolumeId().startsWith("s3files:"));
    StatusRuntimeException nfs =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                createVolume(
                    CreateVolumeRequest.newBuilder(r)
                        .setVolumeCapabilities(
                            0,
                            RWX.toBuilder()
                                .setMount(RWX.getMount().toBuilder().setFsType("nfs"))
                                .build())
                        .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, StatusMapper.toStatus(nfs).getCode());
  }
}

package io.efscsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.controller.cloud.Clouds;
import io.efscsi.controller.provision.AccessPointProvisioner;
import io.efscsi.controller.provision.FileSystemIds;
import io.efscsi.controller.provision.Tags;
import io.efscsi.csi.v1.CapacityRange;
import io.efscsi.csi.v1.ControllerExpandVolumeRequest;
import io.efscsi.csi.v1.ControllerExpandVolumeResponse;
import io.efscsi.csi.v1.ControllerGetCapabilitiesRequest;
import io.efscsi.csi.v1.ControllerServiceCapability;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ControllerExpandVolume against the EFS emulator through the real SDK: the access point's capacity
 * tag follows the claim's size, and every refusal has its code and names the volume.
 */
class ControllerExpandVolumeTest {

  static final long GIB = 1L << 30;

  EfsEmulator emu;
  Clouds clouds;
  ControllerService service;
  String fs;

  @BeforeEach
  void start() throws Exception {
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
    clouds = ControllerServiceTest.emulatorClouds(emu, new SimpleMeterRegistry());
    AccessPointProvisioner p =
        new AccessPointProvisioner(
            clouds, FileSystemIds.literalOnly(), Tags.parse(""), 10_000, Duration.ofMinutes(5));
    service = new ControllerService(() -> Optional.of(p));
  }

  @AfterEach
  void stop() {
    clouds.close();
    emu.close();
  }

  private String created(String name, long bytes) {
    CreateVolumeRequest r =
        ControllerServiceTest.create(name, ControllerServiceTest.paramsOf("efs-ap", fs, "700"))
            .toBuilder()
            .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
            .build();
    return ControllerServiceTest.createVolume(service, r).getVolume().getVolumeId();
  }

  private ControllerExpandVolumeResponse expand(String volumeId, long required, long limit) {
    ControllerExpandVolumeRequest.Builder r =
        ControllerExpandVolumeRequest.newBuilder().setVolumeId(volumeId);
    if (required >= 0) {
      r.setCapacityRange(
          CapacityRange.newBuilder().setRequiredBytes(required).setLimitBytes(limit));
    }
    ControllerExpandVolumeRequest req = r.build();
    return ControllerServiceTest.<ControllerExpandVolumeResponse>call(
        o -> service.controllerExpandVolume(req, o));
  }

  private StatusRuntimeException refused(String volumeId, long required, long limit) {
    return assertThrows(StatusRuntimeException.class, () -> expand(volumeId, required, limit));
  }

  @SuppressWarnings("unchecked")
  private String capacityTag(String volumeId) {
    Map<String, Object> ap =
        emu.accessPoint(volumeId.substring(volumeId.lastIndexOf(':') + 1)).orElseThrow();
    for (Map<String, Object> t : (List<Map<String, Object>>) ap.get("Tags")) {
      if (t.get("Key").equals(Tags.CAPACITY_KEY)) {
        return (String) t.get("Value");
      }
    }
    return null;
  }

  @Test
  void anExpansionRecordsTheNewSizeOnTheAccessPointAndAsksNoNodeStep() {
    String id = created("pvc-grow", GIB);
    assertEquals(Long.toString(GIB), capacityTag(id));
    ControllerExpandVolumeResponse r = expand(id, 5 * GIB, 0);
    assertEquals(5 * GIB, r.getCapacityBytes());
    assertFalse(r.getNodeExpansionRequired());
    assertEquals(Long.toString(5 * GIB), capacityTag(id));
    assertEquals(1, emu.calls("TagResource"));
    // the same size again (a retried call) records nothing more
    assertEquals(5 * GIB, expand(id, 5 * GIB, 10 * GIB).getCapacityBytes());
    assertEquals(1, emu.calls("TagResource"));
    // the access point's other tags stay
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> tags =
        (List<Map<String, Object>>)
            emu.accessPoint(id.substring(id.lastIndexOf(':') + 1)).orElseThrow().get("Tags");
    assertTrue(tags.contains(Map.of("Key", "efs.csi.aws.com/cluster", "Value", "true")), "" + tags);
  }

  @Test
  void aShrinkIsOutOfRangeAndChangesNothing() {
    String id = created("pvc-shrink", 4 * GIB);
    StatusRuntimeException e = refused(id, GIB, 0);
    assertEquals(Status.Code.OUT_OF_RANGE, e.getStatus().getCode());
    assertEquals(
        "Volume "
            + id
            + " cannot shrink from "
            + 4 * GIB
            + " to "
            + GIB
            + " bytes: a claim's size can only grow",
        e.getStatus().getDescription());
    assertEquals(Long.toString(4 * GIB), capacityTag(id));
    assertEquals(0, emu.calls("TagResource"));
  }

  @Test
  void aMissingVolumeIsNotFoundAndBadArgumentsAreInvalid() {
    String gone = fs + "::fsap-0123456789abcdef0";
    StatusRuntimeException e = refused(gone, GIB, 0);
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    assertEquals(
        "Volume " + gone + " not found: its access point fsap-0123456789abcdef0 does not exist",
        e.getStatus().getDescription());
    assertEquals(Status.Code.NOT_FOUND, refused("not-a-volume", GIB, 0).getStatus().getCode());
    assertEquals(
        Status.Code.NOT_FOUND,
        refused("fs-0123456789abcdef0", GIB, 0).getStatus().getCode(),
        "a file system that does not exist");
    String id = created("pvc-args", GIB);
    StatusRuntimeException noId = refused("", GIB, 0);
    assertEquals(Status.Code.INVALID_ARGUMENT, noId.getStatus().getCode());
    assertEquals("Volume ID not provided", noId.getStatus().getDescription());
    StatusRuntimeException noRange = refused(id, -1, 0);
    assertEquals(Status.Code.INVALID_ARGUMENT, noRange.getStatus().getCode());
    assertEquals("Capacity range not provided", noRange.getStatus().getDescription());
    StatusRuntimeException inverted = refused(id, 3 * GIB, 2 * GIB);
    assertEquals(Status.Code.INVALID_ARGUMENT, inverted.getStatus().getCode());
    assertEquals(
        "Capacity range invalid: required_bytes " + 3 * GIB + ", limit_bytes " + 2 * GIB,
        inverted.getStatus().getDescription());
  }

  @Test
  void anS3FilesVolumeIsInvalidAndAWholeFileSystemAnswersTheSizeAskedFor() {
    String s3 = "s3files:fs-0123456789abcdef0::fsap-0123456789abcdef0";
    StatusRuntimeException e = refused(s3, GIB, 0);
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("Amazon S3 Files volume"), "" + e);
    ControllerExpandVolumeResponse whole = expand(fs, 7 * GIB, 0);
    assertEquals(7 * GIB, whole.getCapacityBytes());
    assertEquals(0, emu.calls("TagResource"));
  }

  @Test
  void theControllerAdvertisesExpansion() {
    var caps =
        ControllerServiceTest.<io.efscsi.csi.v1.ControllerGetCapabilitiesResponse>call(o ->
            service.controllerGetCapabilities(
                ControllerGetCapabilitiesRequest.getDefaultInstance(), o));
    assertTrue(
        caps.getCapabilitiesList().stream()
            .anyMatch(
                c -> c.getRpc().getType() == ControllerServiceCapability.RPC.Type.EXPAND_VOLUME),
        "" + caps);
  }
}

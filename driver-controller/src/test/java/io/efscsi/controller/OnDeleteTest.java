package io.efscsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.controller.cloud.Clouds;
import io.efscsi.controller.provision.AccessPointProvisioner;
import io.efscsi.controller.provision.DirectoryRemover;
import io.efscsi.controller.provision.FileSystemIds;
import io.efscsi.controller.provision.Tags;
import io.efscsi.csi.v1.CreateVolumeResponse;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeResponse;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The StorageClass parameter {@code onDelete} through the controller service and the real SDK
 * client against the emulator: recorded as a tag at CreateVolume, read back at DeleteVolume, with
 * {@code --delete-access-point-root-dir} on (a remover) and off (none). The remover works on a
 * directory that plays the file system's root (ControllerIT runs the node's mount path).
 */
class OnDeleteTest {

  @TempDir Path fsRoot;
  EfsEmulator emu;
  Clouds clouds;
  String fs;
  LocalDirectoryRemover remover;

  /** With --delete-access-point-root-dir. */
  ControllerService flagOn;

  /** Without it. */
  ControllerService flagOff;

  @BeforeEach
  void start() throws IOException {
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
    emu.addMountTarget(fs, "us-east-1a", "127.0.0.11");
    clouds = ControllerServiceTest.emulatorClouds(emu, new SimpleMeterRegistry());
    remover = new LocalDirectoryRemover(fsRoot);
    flagOn = service(clouds, Optional.of(remover));
    flagOff = service(clouds, Optional.empty());
  }

  /** The controller service on the emulator, with {@code r} as the flag's remover. */
  static ControllerService service(Clouds clouds, Optional<DirectoryRemover> r) {
    AccessPointProvisioner p =
        new AccessPointProvisioner(
            clouds,
            FileSystemIds.literalOnly(),
            Tags.parse(""),
            10_000,
            Duration.ofMinutes(5),
            r,
            "us-east-1");
    return new ControllerService(() -> Optional.of(p));
  }

  @AfterEach
  void stop() {
    clouds.close();
    emu.close();
  }

  String create(ControllerService service, String name, String... kv) {
    Map<String, String> params = new HashMap<>();
    params.put("provisioningMode", "efs-ap");
    params.put("fileSystemId", fs);
    params.put("directoryPerms", "700");
    params.put("basePath", "dyn");
    for (int i = 0; i < kv.length; i += 2) {
      params.put(kv[i], kv[i + 1]);
    }
    return ControllerServiceTest.<CreateVolumeResponse>call(
            o -> service.createVolume(ControllerServiceTest.create(name, params), o))
        .getVolume()
        .getVolumeId();
  }

  static void delete(ControllerService service, String id) {
    ControllerServiceTest.<DeleteVolumeResponse>call(
        o -> service.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build(), o));
  }

  static StatusRuntimeException fails(Status.Code code, Runnable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::run);
    assertEquals(code, e.getStatus().getCode(), e.getStatus().getDescription());
    return e;
  }

  static String apId(String volumeId) {
    return volumeId.substring(volumeId.lastIndexOf(':') + 1);
  }

  Optional<String> tag(String volumeId) {
    return ((List<?>) emu.accessPoint(apId(volumeId)).orElseThrow().get("Tags"))
        .stream()
            .map(t -> (Map<?, ?>) t)
            .filter(t -> Tags.ON_DELETE_KEY.equals(t.get("Key")))
            .map(t -> (String) t.get("Value"))
            .findFirst();
  }

  /** The volume's directory with a file a pod wrote. */
  Path data(String name) throws IOException {
    Path dir = Files.createDirectories(fsRoot.resolve("dyn/" + name + "/sub"));
    Files.writeString(dir.resolve("file"), "data of " + name);
    return dir.getParent();
  }

  @Test
  void deleteRemovesTheDirectoryThenTheAccessPoint() throws Exception {
    String id = create(flagOn, "pvc-d", "onDelete", "delete");
    assertEquals(Optional.of("delete"), tag(id));
    Path dir = data("pvc-d");
    delete(flagOn, id);
    assertFalse(Files.exists(dir));
    assertTrue(emu.accessPoint(apId(id)).isEmpty());
    assertEquals(
        List.of(new LocalDirectoryRemover.Call("remove", remover.targets().getFirst())),
        remover.calls);
  }

  @Test
  void retainKeepsTheDirectoryAlthoughTheFlagIsOn() throws Exception {
    String id = create(flagOn, "pvc-r", "onDelete", "RETAIN");
    assertEquals(Optional.of("retain"), tag(id), "the tag is lowercase");
    Path dir = data("pvc-r");
    delete(flagOn, id);
    assertTrue(Files.exists(dir.resolve("sub/file")));
    assertTrue(emu.accessPoint(apId(id)).isEmpty(), "the access point goes");
    assertTrue(remover.calls.isEmpty());
  }

  @Test
  void archiveRenamesBesideItAndASecondArchiveOfTheSameNameGetsASuffix() throws Exception {
    String first = create(flagOn, "pvc-a", "onDelete", "Archive");
    assertEquals(Optional.of("archive"), tag(first));
    data("pvc-a");
    delete(flagOn, first);
    assertTrue(emu.accessPoint(apId(first)).isEmpty());
    assertFalse(Files.exists(fsRoot.resolve("dyn/pvc-a")));
    assertEquals("data of pvc-a", Files.readString(fsRoot.resolve("dyn/archived-pvc-a/sub/file")));

    String second = create(flagOn, "pvc-a", "onDelete", "archive");
    Path dir = data("pvc-a");
    Files.writeString(dir.resolve("sub/file"), "second life");
    delete(flagOn, second);
    assertEquals("data of pvc-a", Files.readString(fsRoot.resolve("dyn/archived-pvc-a/sub/file")));
    assertEquals("second life", Files.readString(fsRoot.resolve("dyn/archived-pvc-a-2/sub/file")));
    assertEquals(
        List.of("archive", "archive"),
        remover.calls.stream().map(LocalDirectoryRemover.Call::action).toList());
  }

  @Test
  void aRetryAfterTheArchiveButBeforeTheAccessPointWentSucceeds() throws Exception {
    String id = create(flagOn, "pvc-a", "onDelete", "archive");
    data("pvc-a");
    // The directory is renamed, then every EFS call fails until the retries are spent.
    remover.after = () -> emu.faults().failNext(100);
    fails(Status.Code.UNAVAILABLE, () -> delete(flagOn, id));
    assertTrue(emu.accessPoint(apId(id)).isPresent());
    assertTrue(Files.exists(fsRoot.resolve("dyn/archived-pvc-a/sub/file")));
    remover.after = () -> {};
    emu.faults().clear();
    delete(flagOn, id);
    assertTrue(emu.accessPoint(apId(id)).isEmpty());
    assertFalse(Files.exists(fsRoot.resolve("dyn/archived-pvc-a-2")), "nothing archived twice");
    assertTrue(Files.exists(fsRoot.resolve("dyn/archived-pvc-a/sub/file")));
  }

  @Test
  void archiveKeepsTheGuardsOfRemoval() throws Exception {
    String id = create(flagOn, "pvc-a", "onDelete", "archive");
    Path dir = data("pvc-a");
    String shared = emu.seedAccessPoint(fs, 1000, 1000, "/dyn/pvc-a");
    delete(flagOn, id);
    assertTrue(Files.exists(dir.resolve("sub/file")), "a directory in use is not renamed");
    assertTrue(emu.accessPoint(apId(id)).isEmpty());
    assertTrue(emu.accessPoint(shared).isPresent());
    assertTrue(remover.calls.isEmpty());

    String slash = emu.seedAccessPoint(fs, 1000, 1000, "/");
    clouds.defaultCloud().tagAccessPoint(slash, Map.of(Tags.ON_DELETE_KEY, "archive"));
    StatusRuntimeException e =
        fails(Status.Code.FAILED_PRECONDITION, () -> delete(flagOn, fs + "::" + slash));
    assertEquals(
        "DeleteVolume "
            + fs
            + "::"
            + slash
            + ": not archiving the root directory of access point "
            + slash
            + ": its root directory is / (removing it would empty the whole file system). Nothing"
            + " was deleted; delete the access point by hand, or tag it "
            + Tags.ON_DELETE_KEY
            + "=retain",
        e.getStatus().getDescription());
    assertTrue(emu.accessPoint(slash).isPresent());
  }

  @Test
  void withoutOnDeleteTheFlagDecidesAndNothingIsTagged() throws Exception {
    String on = create(flagOn, "pvc-on");
    String off = create(flagOn, "pvc-off");
    assertEquals(Optional.empty(), tag(on));
    Path dirOn = data("pvc-on");
    Path dirOff = data("pvc-off");
    delete(flagOn, on);
    delete(flagOff, off);
    assertFalse(Files.exists(dirOn));
    assertTrue(Files.exists(dirOff.resolve("sub/file")));
    assertTrue(emu.accessPoint(apId(on)).isEmpty());
    assertTrue(emu.accessPoint(apId(off)).isEmpty());
    assertEquals(1, remover.calls.size());
  }

  @Test
  void withoutTheFlagDeleteAndArchiveAreRefusedAtCreateAndRetainIsKept() throws Exception {
    for (String v : List.of("delete", "archive")) {
      StatusRuntimeException e =
          fails(Status.Code.FAILED_PRECONDITION, () -> create(flagOff, "pvc-x", "onDelete", v));
      assertEquals(
          "volume pvc-x: onDelete "
              + v
              + " needs a controller that can mount the file system: run it with"
              + " --delete-access-point-root-dir (the chart's controller.deleteAccessPointRootDir)",
          e.getStatus().getDescription());
    }
    assertEquals(0, emu.accessPointCount(fs));
    String id = create(flagOff, "pvc-r", "onDelete", "retain");
    Path dir = data("pvc-r");
    delete(flagOff, id);
    assertTrue(Files.exists(dir.resolve("sub/file")));
    assertTrue(emu.accessPoint(apId(id)).isEmpty());
  }

  @Test
  void aVolumeMadeForDeleteKeepsItsDirectoryOnceTheFlagIsOffAndTheDeleteIsOneApiCall()
      throws Exception {
    String id = create(flagOn, "pvc-d", "onDelete", "delete");
    Path dir = data("pvc-d");
    long describes = emu.calls("DescribeAccessPoints");
    delete(flagOff, id);
    assertTrue(emu.accessPoint(apId(id)).isEmpty());
    assertTrue(Files.exists(dir.resolve("sub/file")), "without the flag no directory is touched");
    assertEquals(describes, emu.calls("DescribeAccessPoints"), "and no tag is read");
  }

  @Test
  void anUnknownTagValueDeletesNothing() throws Exception {
    String id = create(flagOn, "pvc-u");
    clouds.defaultCloud().tagAccessPoint(apId(id), Map.of(Tags.ON_DELETE_KEY, "shred"));
    StatusRuntimeException e = fails(Status.Code.FAILED_PRECONDITION, () -> delete(flagOn, id));
    assertTrue(
        e.getStatus().getDescription().contains("its tag " + Tags.ON_DELETE_KEY + " is 'shred'"),
        e.getStatus().getDescription());
    assertTrue(emu.accessPoint(apId(id)).isPresent());
    assertTrue(remover.calls.isEmpty());
  }
}

package io.efscsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.controller.cloud.Clouds;
import io.efscsi.controller.provision.DirectoryRemover;
import io.efscsi.controller.provision.Tags;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeResponse;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --delete-access-point-root-dir} through the controller service and the real SDK client
 * against the emulator. The remover stands for the node's mount path (ControllerIT runs that one)
 * and works on a directory that plays the file system's root.
 */
class DeleteRootDirectoryTest {

  @TempDir Path fsRoot;
  EfsEmulator emu;
  Clouds clouds;
  ControllerService service;
  String fs;
  LocalDirectoryRemover remover;

  @BeforeEach
  void start() throws IOException {
    remover = new LocalDirectoryRemover(fsRoot);
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
    emu.addMountTarget(fs, "us-east-1b", "127.0.0.12");
    emu.addMountTarget(fs, "us-east-1a", "127.0.0.11");
    clouds = ControllerServiceTest.emulatorClouds(emu, new SimpleMeterRegistry());
    service = OnDeleteTest.service(clouds, Optional.of(remover));
  }

  @AfterEach
  void stop() {
    remover.gate.countDown();
    clouds.close();
    emu.close();
  }

  String create(String name, String... kv) {
    Map<String, String> params = new java.util.HashMap<>();
    params.put("provisioningMode", "efs-ap");
    params.put("fileSystemId", fs);
    params.put("directoryPerms", "700");
    for (int i = 0; i < kv.length; i += 2) {
      params.put(kv[i], kv[i + 1]);
    }
    return ControllerServiceTest.<io.efscsi.csi.v1.CreateVolumeResponse>call(
            o -> service.createVolume(ControllerServiceTest.create(name, params), o))
        .getVolume()
        .getVolumeId();
  }

  void delete(String id) {
    ControllerServiceTest.<DeleteVolumeResponse>call(
        o -> service.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build(), o));
  }

  /** DeleteVolume with a 300 ms deadline, as csi-provisioner's --timeout. */
  void deleteWithin(String id) {
    var timer = Executors.newSingleThreadScheduledExecutor();
    Context.CancellableContext ctx =
        Context.current().withDeadlineAfter(300, TimeUnit.MILLISECONDS, timer);
    try {
      ctx.run(() -> delete(id));
    } finally {
      ctx.cancel(null);
      timer.shutdownNow();
    }
  }

  static String apId(String volumeId) {
    return volumeId.substring(volumeId.lastIndexOf(':') + 1);
  }

  String root(String volumeId) {
    @SuppressWarnings("unchecked")
    Map<String, Object> rd =
        (Map<String, Object>) emu.accessPoint(apId(volumeId)).orElseThrow().get("RootDirectory");
    return (String) rd.get("Path");
  }

  Path data(String root) throws IOException {
    Path dir = Files.createDirectories(fsRoot.resolve(root.substring(1)));
    Files.createDirectories(dir.resolve("sub/deeper"));
    Files.writeString(dir.resolve("sub/deeper/file"), "pod data");
    return dir;
  }

  @Test
  void removesTheDirectoryBelowItsBasePathThenTheAccessPoint() throws Exception {
    String a = create("pvc-a", "basePath", "dyn");
    String b = create("pvc-b", "basePath", "dyn");
    String rootA = root(a);
    Path dirA = data(rootA);
    Path dirB = data(root(b));
    delete(a);
    assertFalse(Files.exists(dirA));
    assertTrue(Files.exists(dirB.resolve("sub/deeper/file")), "the other volume's data is kept");
    assertTrue(emu.accessPoint(apId(a)).isEmpty());
    assertEquals("/dyn/pvc-a", rootA);
    assertEquals(
        List.of(new DirectoryRemover.Target("us-east-1", fs, "127.0.0.11", apId(a), rootA)),
        remover.targets(),
        "one removal, through the first available mount target by zone");
    delete(a); // a retry after success: the access point is gone, nothing to do
    assertEquals(1, remover.targets().size());
    assertEquals(
        "/dyn",
        ((List<?>) emu.accessPoint(apId(b)).orElseThrow().get("Tags"))
            .stream()
                .map(t -> (Map<?, ?>) t)
                .filter(t -> Tags.BASE_PATH_KEY.equals(t.get("Key")))
                .map(t -> t.get("Value"))
                .findFirst()
                .orElseThrow());
  }

  @Test
  void anAccessPointRootedAtSlashIsRefusedAndNothingIsDeleted() throws Exception {
    String ap = emu.seedAccessPoint(fs, 1000, 1000, "/");
    Path file = Files.writeString(fsRoot.resolve("precious"), "keep me");
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> delete(fs + "::" + ap));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
    assertEquals(
        "DeleteVolume "
            + fs
            + "::"
            + ap
            + ": not removing the root directory of access point "
            + ap
            + ": its root directory is / (removing it would empty the whole file system). Nothing"
            + " was deleted; delete the access point by hand, or run the controller without"
            + " --delete-access-point-root-dir",
        e.getStatus().getDescription());
    assertTrue(emu.accessPoint(ap).isPresent());
    assertTrue(Files.exists(file));
    assertTrue(remover.targets().isEmpty());
  }

  @Test
  void anAccessPointOfAnotherFileSystemIsRefused() {
    String other = emu.createFileSystem();
    String ap = emu.seedAccessPoint(other, 1000, 1000, "/pvc-x");
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> delete(fs + "::" + ap));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
    assertTrue(
        e.getStatus()
            .getDescription()
            .contains(
                "it belongs to file system " + other + ", not to " + fs + " of the volume id"),
        e.getStatus().getDescription());
    assertTrue(emu.accessPoint(ap).isPresent());
    assertTrue(remover.targets().isEmpty());
  }

  @Test
  void aDirectoryAnotherAccessPointUsesIsKeptUntilTheLastOneGoes() throws Exception {
    String a = create("pvc-a");
    String shared = emu.seedAccessPoint(fs, 1000, 1000, root(a));
    Path dir = data(root(a));
    delete(a);
    assertTrue(emu.accessPoint(apId(a)).isEmpty(), "the access point goes");
    assertTrue(Files.exists(dir.resolve("sub/deeper/file")), "the shared data stays");
    assertTrue(remover.targets().isEmpty());
    delete(fs + "::" + shared);
    assertFalse(Files.exists(dir), "the last user's delete removes it");
    assertEquals(1, remover.targets().size());
  }

  @Test
  void noAvailableMountTargetIsUnavailableAndKeepsTheAccessPoint() {
    String bare = emu.createFileSystem();
    String ap = emu.seedAccessPoint(bare, 1000, 1000, "/pvc-x");
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> delete(bare + "::" + ap));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("has no available mount target"));
    assertTrue(emu.accessPoint(ap).isPresent());
  }

  @Test
  void aLongRemovalAnswersAbortedAndTheRetryJoinsIt() throws Exception {
    String a = create("pvc-a");
    Path dir = data(root(a));
    remover.gate = new CountDownLatch(1);
    for (int attempt = 0; attempt < 2; attempt++) {
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> deleteWithin(a));
      assertEquals(Status.Code.ABORTED, e.getStatus().getCode());
      assertTrue(e.getStatus().getDescription().contains("is still being removed"));
      assertTrue(emu.accessPoint(apId(a)).isPresent(), "the access point outlives its directory");
      assertEquals(1, remover.targets().size(), "the retry joined the running removal");
    }
    remover.gate.countDown();
    delete(a);
    assertFalse(Files.exists(dir));
    assertTrue(emu.accessPoint(apId(a)).isEmpty());
    assertEquals(
        1, remover.targets().size(), "the finished removal's result was taken, not redone");
  }
}

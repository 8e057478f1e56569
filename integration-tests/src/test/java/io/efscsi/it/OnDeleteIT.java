package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.ControllerGrpc;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.DeleteVolumeRequest;
import io.efscsi.emulator.EfsEmulator;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The StorageClass parameter {@code onDelete} (delete, retain, archive, and left out) through the
 * packaged controller: its real AWS SDK client records the choice as a tag in the EFS emulator at
 * CreateVolume and reads it back at DeleteVolume, and the directory is removed or renamed on the
 * node's mount path (a real proxy from the controller's own supervisor, the mount command, rm or mv
 * in a child), as {@link ControllerIT} runs {@code --delete-access-point-root-dir}. The mount
 * command binds a directory standing for the file system (this kernel has no NFS client).
 */
class OnDeleteIT {

  @TempDir Path tmp;
  EfsEmulator emu;
  String fs;
  PackagedDriver driver;
  CsiChannels.Client client;

  /** Whether the proxies' default cgroup parent was there before the test (see stop()). */
  private final boolean cgroupParentBefore =
      HostCleanup.cgroupParentExists(HostCleanup.DEFAULT_CGROUP_PARENT);

  @BeforeEach
  void emulator() throws Exception {
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
    emu.addMountTarget(fs, "us-east-1a", "127.0.0.1");
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (driver != null) {
      assertEquals(0, driver.terminate(Duration.ofSeconds(20)), driver.logText());
    }
    // the cleanup mounts run a supervisor, which makes the default cgroup parent
    HostCleanup.removeDefaultCgroupParentIfNew(cgroupParentBefore);
    emu.close();
  }

  void start(TestInfo info, Map<String, String> env, String... flags) throws Exception {
    int httpPort;
    try (ServerSocket s = new ServerSocket(0)) {
      httpPort = s.getLocalPort();
    }
    Path socket = tmp.resolve("controller.sock");
    Path log =
        Path.of(
            "target/it-logs/OnDeleteIT-" + info.getTestMethod().orElseThrow().getName() + ".log");
    driver = ControllerIT.startController(socket, log, emu, httpPort, env, List.of(flags));
    client = CsiChannels.open(new Endpoint.Unix(socket));
  }

  ControllerGrpc.ControllerBlockingStub controller() {
    return ControllerGrpc.newBlockingStub(client.channel()).withDeadlineAfter(60, TimeUnit.SECONDS);
  }

  /** CreateVolume under basePath dyn, with onDelete when {@code onDelete} is not null. */
  String create(String name, String onDelete) {
    CreateVolumeRequest.Builder r =
        CreateVolumeRequest.newBuilder()
            .setName(name)
            .addVolumeCapabilities(ControllerIT.RWX)
            .putAllParameters(
                Map.of(
                    "provisioningMode", "efs-ap",
                    "fileSystemId", fs,
                    "directoryPerms", "700",
                    "basePath", "dyn"));
    if (onDelete != null) {
      r.putParameters("onDelete", onDelete);
    }
    return controller().createVolume(r.build()).getVolume().getVolumeId();
  }

  void delete(String volumeId) {
    controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build());
  }

  static String apId(String volumeId) {
    return volumeId.substring(volumeId.lastIndexOf(':') + 1);
  }

  /** What a pod of {@code pv} writes into its directory. */
  static void write(Path fsRoot, String pv, String text) throws Exception {
    Path d = Files.createDirectories(fsRoot.resolve("dyn/" + pv + "/a/b"));
    Files.writeString(d.resolve("data"), text);
  }

  @Test
  void eachValueThroughAProxyAndAMount(TestInfo info) throws Exception {
    Path fsRoot = Files.createDirectories(tmp.resolve("fs-root"));
    Path state = tmp.resolve("state");
    Path mountLog = tmp.resolve("mounts.log");
    start(
        info,
        Map.of("FAKE_NFS_ROOT", fsRoot.toString(), "FAKE_NFS_LOG", mountLog.toString()),
        ControllerIT.cleanupFlags(tmp, state));
    Map<String, String> volumes = new java.util.LinkedHashMap<>();
    volumes.put("pvc-del", create("pvc-del", "delete"));
    volumes.put("pvc-ret", create("pvc-ret", "retain"));
    volumes.put("pvc-arc", create("pvc-arc", "Archive"));
    volumes.put("pvc-def", create("pvc-def", null));
    for (String pv : volumes.keySet()) {
      write(fsRoot, pv, "written by a pod of " + pv);
    }
    for (String id : volumes.values()) {
      delete(id);
      assertTrue(emu.accessPoint(apId(id)).isEmpty(), id + "\n" + driver.logText());
    }
    assertFalse(Files.exists(fsRoot.resolve("dyn/pvc-del")), "delete: removed");
    assertEquals(
        "written by a pod of pvc-ret",
        Files.readString(fsRoot.resolve("dyn/pvc-ret/a/b/data")),
        "retain: kept in place although the flag is on");
    assertFalse(Files.exists(fsRoot.resolve("dyn/pvc-arc")), "archive: renamed");
    assertEquals(
        "written by a pod of pvc-arc",
        Files.readString(fsRoot.resolve("dyn/archived-pvc-arc/a/b/data")));
    assertFalse(Files.exists(fsRoot.resolve("dyn/pvc-def")), "left out: the flag's delete");
    List<String> mounts = Files.readAllLines(mountLog);
    assertEquals(3, mounts.size(), "one mount each for delete, archive and the flag: " + mounts);
    List<String> mountedFor = new ArrayList<>();
    for (String m : mounts) {
      mountedFor.add(m.substring(m.lastIndexOf('/') + 1));
    }
    assertEquals(
        List.of(
            apId(volumes.get("pvc-del")),
            apId(volumes.get("pvc-arc")),
            apId(volumes.get("pvc-def"))),
        mountedFor);

    // The same name archived again: a suffix, the first archive untouched; a retry is a success.
    String again = create("pvc-arc", "archive");
    write(fsRoot, "pvc-arc", "second life");
    delete(again);
    delete(again);
    assertEquals(
        "written by a pod of pvc-arc",
        Files.readString(fsRoot.resolve("dyn/archived-pvc-arc/a/b/data")));
    assertEquals(
        "second life", Files.readString(fsRoot.resolve("dyn/archived-pvc-arc-2/a/b/data")));
    assertEquals(4, Files.readAllLines(mountLog).size());
    ControllerIT.assertNothingLeft(state);
  }

  @Test
  void withoutTheFlagDeleteAndArchiveAreRefusedAndRetainKeeps(TestInfo info) throws Exception {
    start(info, Map.of());
    for (String v : List.of("delete", "archive")) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> create("pvc-x", v));
      assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), e.getMessage());
      assertTrue(
          e.getStatus().getDescription().contains("run it with --delete-access-point-root-dir"),
          e.getMessage());
    }
    StatusRuntimeException bad =
        assertThrows(StatusRuntimeException.class, () -> create("pvc-x", "shred"));
    assertEquals(Status.Code.INVALID_ARGUMENT, bad.getStatus().getCode());
    assertEquals(
        "Invalid value for onDelete parameter: 'shred' (expected delete, retain or archive)",
        bad.getStatus().getDescription());
    assertEquals(0, emu.accessPointCount(fs));
    String kept = create("pvc-ret", "retain");
    String left = create("pvc-def", null);
    delete(kept);
    delete(left);
    assertEquals(0, emu.accessPointCount(fs));
  }
}

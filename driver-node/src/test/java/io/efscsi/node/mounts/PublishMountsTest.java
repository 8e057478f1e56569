package io.efscsi.node.mounts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.supervisor.host.MountPoints;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublishMountsTest {

  @TempDir Path tmp;
  final FakeKernel kernel = new FakeKernel();
  final MountPoints mounts = new MountPoints(kernel);
  final PublishMounts publish = new PublishMounts(kernel, mounts, Duration.ofMillis(200));

  Path staged() throws Exception {
    Path staging = tmp.resolve("staging");
    kernel.mountNfs("127.0.0.1:/", staging, List.of("soft", "port=20049"));
    return staging;
  }

  @Test
  void publishIsABindMountAndARepeatIsASuccess() throws Exception {
    Path staging = staged();
    Path target = tmp.resolve("pod/mount");
    publish.publish("fs-1", staging, target, false);
    publish.publish("fs-1", staging, target, false);
    assertTrue(Files.isDirectory(target));
    assertEquals(1, kernel.calls.stream().filter(c -> c.startsWith("bind")).count());
    assertEquals(
        20049,
        mounts.at(target).orElseThrow().loopbackPort().getAsInt(),
        "a bind mount carries the port");
  }

  @Test
  void aTargetMountedDifferentlyIsRefusedNotReplaced() throws Exception {
    Path staging = staged();
    Path target = tmp.resolve("pod/mount");
    publish.publish("fs-1", staging, target, false);
    DriverException e =
        assertThrows(DriverException.class, () -> publish.publish("fs-1", staging, target, true));
    assertEquals(DriverException.Kind.ALREADY_EXISTS, e.kind());
    assertTrue(
        e.getMessage().contains("read-write") && e.getMessage().contains("read-only"),
        e.getMessage());
  }

  @Test
  void aGoDriverMountTakenOverAtTheTargetIsAlreadyPublished() throws Exception {
    Path target = tmp.resolve("pods/uid-1/volumes/kubernetes.io~csi/pv-1/mount");
    kernel.mountNfs("127.0.0.1:/", target, List.of("hard", "port=20417"));
    PublishMounts withTakeover =
        new PublishMounts(
            kernel,
            mounts,
            Duration.ofMillis(200),
            PublishMounts.Unpublished.NONE,
            (volumeId, t) -> volumeId.equals("fs-1") && t.equals(target));
    Path staging = staged();
    int calls = kernel.calls.size();
    withTakeover.publish("fs-1", staging, target, false); // kubelet again after its restart
    assertEquals(calls, kernel.calls.size(), "nothing mounted: it is published");
    DriverException other =
        assertThrows(
            DriverException.class, () -> withTakeover.publish("fs-2", staging, target, false));
    assertEquals(DriverException.Kind.ALREADY_EXISTS, other.kind(), "another volume's target");
    DriverException without =
        assertThrows(DriverException.class, () -> publish.publish("fs-1", staging, target, false));
    assertEquals(DriverException.Kind.ALREADY_EXISTS, without.kind(), "no takeover, no pass");
  }

  @Test
  void publishBeforeStageIsAFailedPrecondition() {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> publish.publish("fs-1", tmp.resolve("nothing"), tmp.resolve("t"), false));
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, e.kind());
    assertFalse(Files.exists(tmp.resolve("t")));
  }

  @Test
  void aFailedBindRemovesTheDirectoryItMade() throws Exception {
    Path staging = staged();
    Path target = tmp.resolve("pod/mount");
    kernel.failNextBind = true;
    DriverException e =
        assertThrows(DriverException.class, () -> publish.publish("fs-1", staging, target, false));
    assertTrue(e.getMessage().contains("permission denied (injected)"), e.getMessage());
    assertFalse(Files.exists(target));
  }

  @Test
  void aBusyTargetIsDetachedLazilyAndUnpublishReturnsOnlyWhenItIsGone() throws Exception {
    Path staging = staged();
    Path target = tmp.resolve("pod/mount");
    publish.publish("fs-1", staging, target, false);
    kernel.markBusy(target);
    publish.unpublish("fs-1", target);
    assertFalse(mounts.isMounted(target));
    assertFalse(Files.exists(target));
    assertEquals(List.of("umount " + target, "umount -l " + target), kernel.calls.subList(2, 4));
    publish.unpublish("fs-1", target); // a repeat is a success
  }

  @Test
  void stackedMountsAtTheTargetAllGo() throws Exception {
    Path staging = staged();
    Path target = tmp.resolve("pod/mount");
    Files.createDirectories(target);
    kernel.bind(staging, target, false);
    kernel.bind(staging, target, false);
    publish.unpublish("fs-1", target);
    assertFalse(mounts.isMounted(target));
  }

  @Test
  void aVolumeTheGoDriverMountedStraightAtTheTargetUnpublishesCleanly() throws Exception {
    Path target = tmp.resolve("pod/mount");
    Files.createDirectories(target);
    kernel.mountNfs("127.0.0.1:/", target, List.of("hard", "port=20051")); // efs-utils, no staging
    publish.unpublish("fs-1", target);
    assertFalse(mounts.isMounted(target));
    assertFalse(Files.exists(target));
  }

  @Test
  void aNonEmptyTargetDirectoryIsLeftInPlace() throws Exception {
    Path target = tmp.resolve("pod/mount");
    Files.createDirectories(target);
    Files.writeString(target.resolve("data"), "x");
    publish.unpublish("fs-1", target);
    assertTrue(Files.exists(target.resolve("data")), "never delete data");
  }
}

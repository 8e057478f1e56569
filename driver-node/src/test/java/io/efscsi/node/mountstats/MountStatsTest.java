package io.efscsi.node.mountstats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The mountstats reader on blocks written as the kernel writes them, and on broken ones. */
class MountStatsTest {

  @Test
  void readsWhatKernel61Wrote() {
    // kernel 6.1 (Debian 12), NFSv4.1 through two proxies of the packaged plugin: two staging
    // mounts and a pod's bind mount of each (scenario 3 of the kernel VM suite)
    MountStats.Result r =
        MountStats.read(MountStatsSamples.sample("kernel-6.1.0-56.txt"), m -> true);
    assertEquals(List.of(), r.refused());
    assertEquals(0, r.dropped());
    assertEquals(
        List.of(20070, 20071, 20070, 20071),
        r.mounts().stream().map(m -> m.port().orElseThrow()).toList());
    assertEquals(
        "/run/vm/mnt/s3/pods/uid-b/volumes/kubernetes.io~csi/pv-b/mount",
        r.mounts().get(3).mountPoint());
    MountStats.Mount a = r.mounts().get(0);
    assertEquals(69, a.ops().size());
    assertEquals(
        new MountStats.Op(312, 312, 0, 327220608, 69888, 7305, 451834, 459281, 0),
        a.ops().get("WRITE"));
    assertEquals(new MountStats.Op(1, 1, 0, 144, 304, 0, 40, 62, 0), a.ops().get("LOOKUP_ROOT"));
    assertEquals(327155712, a.bytes().serverWrite());
    assertEquals(25165824, a.bytes().serverRead());
    assertEquals(2, a.connects());
    assertEquals(
        "soft", a.options().keySet().stream().filter("soft"::equals).findFirst().orElse(""));
    assertEquals("50", a.options().get("timeo"));
    assertEquals(a.ops(), r.mounts().get(2).ops(), "a bind mount shows its superblock's numbers");
  }

  @Test
  void readsWhatKernel510Wrote() {
    // kernel 5.10 (Debian 11), NFSv4.1 through the demo's proxy, which the demo killed with
    // kill -9 mid-transfer: three READs reached their major timeout, two ended in an error
    MountStats.Result r =
        MountStats.read(MountStatsSamples.sample("kernel-5.10.0-32.txt"), m -> true);
    assertEquals(List.of(), r.refused());
    assertEquals(1, r.mounts().size());
    MountStats.Mount m = r.mounts().get(0);
    assertEquals(Optional.of(20049), m.port());
    assertEquals(69, m.ops().size());
    assertEquals(
        new MountStats.Op(480, 480, 3, 90052, 67158576, 12691, 172042, 216124, 2),
        m.ops().get("READ"));
    assertEquals(67108864, m.bytes().serverRead());
    assertEquals(19, m.connects());
  }

  @Test
  void readsTheBlocksOfNfsMountsAndSkipsTheRest() {
    String text =
        "device proc mounted on /proc with fstype proc\n"
            + MountStatsSamples.block(
                "/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pv\\040one/mount",
                20049,
                "\t        NULL: 0 0 0 0 0 0 0 0 0\n"
                    + "\t        READ: 10 12 1 1280 1048576 5 40 50 2\n"
                    + "\t       WRITE: 4 4 0 4194304 640 1 30 33 0\n")
            + "device sysfs mounted on /sys with fstype sysfs\n";
    MountStats.Result r = MountStats.read(text, m -> true);
    assertEquals(List.of(), r.refused());
    assertEquals(1, r.mounts().size());
    MountStats.Mount m = r.mounts().get(0);
    assertEquals("/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pv one/mount", m.mountPoint());
    assertEquals("127.0.0.1:/", m.device());
    assertEquals("nfs4", m.fsType());
    assertEquals(Optional.of(20049), m.port());
    assertEquals(5000, m.bytes().serverRead());
    assertEquals(6000, m.bytes().serverWrite());
    assertEquals(3, m.connects());
    assertEquals(List.of("NULL", "READ", "WRITE"), List.copyOf(m.ops().keySet()));
    MountStats.Op read = m.ops().get("READ");
    assertEquals(new MountStats.Op(10, 12, 1, 1280, 1048576, 5, 40, 50, 2), read);
    assertEquals(2, read.retransmissions());
  }

  @Test
  void aKernelBefore53HasNoErrorsColumn() {
    MountStats.Mount m =
        MountStats.read(
                MountStatsSamples.block("/m", 1, "\t        READ: 1 1 0 2 3 4 5 6\n"), x -> true)
            .mounts()
            .get(0);
    assertEquals(-1, m.ops().get("READ").errors());
  }

  @Test
  void numbersPast2To63StayPositive() {
    MountStats.Mount m =
        MountStats.read(
                MountStatsSamples.block(
                    "/m", 1, "\t        READ: 18446744073709551615 1 0 2 3 4 5 6 7\n"),
                x -> true)
            .mounts()
            .get(0);
    assertEquals(1.8446744073709552e19, m.ops().get("READ").ops());
  }

  @Test
  void aBrokenBlockIsLeftOutWithItsReasonAndTheNextOneIsRead() {
    String text =
        MountStatsSamples.block("/broken", 1, "\t        READ: 1 2 x 4 5 6 7 8 9\n")
            + MountStatsSamples.block("/short", 2, "\t        WRITE: 1 2 3\n")
            + MountStatsSamples.block("/good", 3, "\t        READ: 1 1 0 0 0 0 0 0 0\n");
    MountStats.Result r = MountStats.read(text, m -> true);
    assertEquals(List.of("/good"), r.mounts().stream().map(MountStats.Mount::mountPoint).toList());
    assertEquals(
        List.of(
            "the mount on /broken: its READ line holds \"x\", not an unsigned number",
            "the mount on /short: its WRITE line has 3 numbers, fewer than 8"),
        r.refused());
  }

  @Test
  void theFilterPicksMountsAndTheBoundsHold() {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < MountStats.MAX_MOUNTS + 5; i++) {
      text.append(MountStatsSamples.block("/m" + i, 20000 + (i % 1000), ""));
    }
    MountStats.Result r = MountStats.read(text.toString(), m -> true);
    assertEquals(MountStats.MAX_MOUNTS, r.mounts().size());
    assertEquals(5, r.dropped());
    MountStats.Result one = MountStats.read(text.toString(), m -> m.mountPoint().equals("/m7"));
    assertEquals(1, one.mounts().size());

    StringBuilder ops = new StringBuilder();
    for (int i = 0; i <= MountStats.MAX_OPS; i++) {
      ops.append("\tOP").append(i).append(": 1 1 0 0 0 0 0 0 0\n");
    }
    MountStats.Result many =
        MountStats.read(MountStatsSamples.block("/many", 1, ops.toString()), m -> true);
    assertTrue(many.mounts().isEmpty());
    assertEquals(List.of("the mount on /many: it has more than 128 operations"), many.refused());
  }
}

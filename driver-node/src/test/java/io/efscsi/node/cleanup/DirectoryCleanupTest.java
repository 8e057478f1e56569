package io.efscsi.node.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The removal step of the controller's cleanup mounts, with real rm and realpath on a tmp dir. */
class DirectoryCleanupTest {

  @TempDir Path tmp;

  @Test
  void removesTheDirectoryAndEverythingBelowItOnly() throws Exception {
    Path mnt = Files.createDirectories(tmp.resolve("mnt")).toRealPath();
    Files.createDirectories(mnt.resolve("base/pvc-1/a/b"));
    Files.writeString(mnt.resolve("base/pvc-1/a/b/f"), "x");
    Files.createSymbolicLink(mnt.resolve("base/pvc-1/escape"), tmp);
    Files.createDirectories(mnt.resolve("base/pvc-10"));
    assertTrue(DirectoryCleanup.removeBelow(mnt, "/base/pvc-1"));
    assertFalse(Files.exists(mnt.resolve("base/pvc-1")));
    assertTrue(Files.exists(mnt.resolve("base/pvc-10")));
    assertTrue(Files.exists(tmp), "a link inside is removed, not followed");
  }

  @Test
  void aMissingDirectoryIsNotAnError() throws Exception {
    Path mnt = Files.createDirectories(tmp.resolve("mnt")).toRealPath();
    assertFalse(DirectoryCleanup.removeBelow(mnt, "/base/pvc-1"));
  }

  @Test
  void aSymbolicLinkOnTheWayIsRefused() throws Exception {
    Path mnt = Files.createDirectories(tmp.resolve("mnt")).toRealPath();
    Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere/pvc-1"));
    Files.writeString(elsewhere.resolve("f"), "keep");
    Files.createSymbolicLink(mnt.resolve("base"), elsewhere.getParent());
    DriverException e =
        assertThrows(DriverException.class, () -> DirectoryCleanup.removeBelow(mnt, "/base/pvc-1"));
    assertEquals(
        "not removing /base/pvc-1: a symbolic link on its way leads to " + elsewhere.toRealPath(),
        e.getMessage());
    assertTrue(Files.exists(elsewhere.resolve("f")));
  }

  @Test
  void archiveRenamesBesideItNeverReplacingAndIsIdempotent() throws Exception {
    Path mnt = Files.createDirectories(tmp.resolve("mnt")).toRealPath();
    Files.createDirectories(mnt.resolve("base/pvc-1/a"));
    Files.writeString(mnt.resolve("base/pvc-1/a/f"), "first");
    assertEquals(
        Optional.of("/base/archived-pvc-1"), DirectoryCleanup.archiveBelow(mnt, "/base/pvc-1"));
    assertEquals("first", Files.readString(mnt.resolve("base/archived-pvc-1/a/f")));
    assertEquals(
        Optional.empty(),
        DirectoryCleanup.archiveBelow(mnt, "/base/pvc-1"),
        "a retry after the rename finds nothing to do");

    Files.createDirectories(mnt.resolve("base/pvc-1/a"));
    Files.writeString(mnt.resolve("base/pvc-1/a/f"), "second");
    // Taken names: an empty directory (mv -T would replace it) and a dangling symbolic link.
    Files.createDirectories(mnt.resolve("base/archived-pvc-1-2"));
    Files.createSymbolicLink(mnt.resolve("base/archived-pvc-1-3"), tmp.resolve("nowhere"));
    assertEquals(
        Optional.of("/base/archived-pvc-1-4"), DirectoryCleanup.archiveBelow(mnt, "/base/pvc-1"));
    assertEquals("first", Files.readString(mnt.resolve("base/archived-pvc-1/a/f")));
    assertEquals("second", Files.readString(mnt.resolve("base/archived-pvc-1-4/a/f")));
    try (var s = Files.list(mnt.resolve("base/archived-pvc-1-2"))) {
      assertEquals(0, s.count());
    }

    Files.createDirectories(mnt.resolve("top"));
    assertEquals(Optional.of("/archived-top"), DirectoryCleanup.archiveBelow(mnt, "/top"));
  }

  @Test
  void archiveRefusesASymbolicLinkOnTheWay() throws Exception {
    Path mnt = Files.createDirectories(tmp.resolve("mnt")).toRealPath();
    Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere/pvc-1"));
    Files.createSymbolicLink(mnt.resolve("base"), elsewhere.getParent());
    DriverException e =
        assertThrows(
            DriverException.class, () -> DirectoryCleanup.archiveBelow(mnt, "/base/pvc-1"));
    assertEquals(
        "not archiving /base/pvc-1: a symbolic link on its way leads to " + elsewhere.toRealPath(),
        e.getMessage());
    assertTrue(Files.exists(elsewhere));
    assertFalse(Files.exists(elsewhere.resolveSibling("archived-pvc-1")));
  }
}

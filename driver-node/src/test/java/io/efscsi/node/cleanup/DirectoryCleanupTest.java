package io.efscsi.node.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;
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
}

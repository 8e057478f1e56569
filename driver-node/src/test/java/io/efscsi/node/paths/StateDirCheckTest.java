package io.efscsi.node.paths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirCheckTest {

  @TempDir Path tmp;

  @Test
  void createsAMissingDirAndLeavesNoProbeFileBehind() throws Exception {
    Path dir = tmp.resolve("var/run/efs-csi");
    assertNull(new StateDirCheck(dir).notReadyReason());
    assertTrue(Files.isDirectory(dir));
    try (Stream<Path> s = Files.list(dir)) {
      assertEquals(0, s.count());
    }
  }

  @Test
  void notReadyWhileThePathIsNotADirectoryThenReady() throws Exception {
    Path dir = tmp.resolve("state");
    Files.writeString(dir, "not a dir");
    StateDirCheck check = new StateDirCheck(dir);
    String why = check.notReadyReason();
    assertTrue(why != null && why.startsWith("not writable"), String.valueOf(why));
    Files.delete(dir);
    assertNull(check.notReadyReason());
  }
}

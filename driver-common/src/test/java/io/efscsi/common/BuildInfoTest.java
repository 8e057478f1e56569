package io.efscsi.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The build writes its real version, commit and date into build.properties. */
class BuildInfoTest {

  /** What git says HEAD is in the checkout these sources are in, or the build's "unknown". */
  static String checkoutCommit() throws Exception {
    Path root = Path.of("..").toAbsolutePath().normalize();
    if (!Files.exists(root.resolve(".git"))) {
      return "unknown (not built from a git checkout)";
    }
    Process git =
        new ProcessBuilder("git", "rev-parse", "HEAD")
            .directory(root.toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertEquals(0, git.waitFor(), out);
    return out;
  }

  @Test
  void theBuildWritesItsVersionCommitAndDate() throws Exception {
    BuildInfo info = BuildInfo.load();
    for (String value : new String[] {info.version(), info.gitCommit(), info.buildDate()}) {
      assertFalse(value.contains("${"), "an unfiltered property: " + info);
    }
    assertFalse(info.version().isBlank(), info.toString());
    // This checkout's commit (a linked worktree's own, not its main worktree's), or the build
    // says it had none.
    assertEquals(checkoutCommit(), info.gitCommit());
    // The time of this build (these classes were filtered by it), not a fixed timestamp.
    Instant built = Instant.parse(info.buildDate());
    assertTrue(built.isBefore(Instant.now().plusSeconds(1)), info.toString());
    assertTrue(built.isAfter(Instant.now().minus(Duration.ofDays(2))), info.toString());
  }
}

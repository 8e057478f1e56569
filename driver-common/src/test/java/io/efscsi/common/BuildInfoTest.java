package io.efscsi.common;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The build writes its real version, commit and date into build.properties. */
class BuildInfoTest {

  @Test
  void theBuildWritesItsVersionCommitAndDate() {
    BuildInfo info = BuildInfo.load();
    for (String value : new String[] {info.version(), info.gitCommit(), info.buildDate()}) {
      assertFalse(value.contains("${"), "an unfiltered property: " + info);
    }
    assertFalse(info.version().isBlank(), info.toString());
    // A 40-digit commit from a git checkout, or the build says it had none.
    assertTrue(
        info.gitCommit().matches("[0-9a-f]{40}")
            || info.gitCommit().equals("unknown (not built from a git checkout)"),
        info.toString());
    // The time of this build (these classes were filtered by it), not a fixed timestamp.
    Instant built = Instant.parse(info.buildDate());
    assertTrue(built.isBefore(Instant.now().plusSeconds(1)), info.toString());
    assertTrue(built.isAfter(Instant.now().minus(Duration.ofDays(2))), info.toString());
  }
}

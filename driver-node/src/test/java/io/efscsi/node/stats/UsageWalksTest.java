package io.efscsi.node.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UsageWalksTest {

  @TempDir Path tmp;

  static OptionalLong awaitValue(UsageWalks w, String vol, Path p) throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      OptionalLong v = w.usedBytes(vol, "fs-1", p);
      if (v.isPresent()) {
        return v;
      }
      Thread.sleep(20);
    }
    return OptionalLong.empty();
  }

  @Test
  void theFirstCallStartsAWalkAndLaterCallsGetItsResultUntilItIsStale() throws Exception {
    Files.write(tmp.resolve("a"), new byte[300_000]);
    Instant[] now = {Instant.parse("2026-01-01T00:00:00Z")};
    Clock clock =
        new Clock() {
          @Override
          public ZoneOffset getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(java.time.ZoneId z) {
            return this;
          }

          @Override
          public Instant instant() {
            return now[0];
          }
        };
    UsageWalks w = new UsageWalks(Duration.ofMinutes(240), 5, Duration.ofSeconds(30), clock);
    assertEquals(OptionalLong.empty(), w.usedBytes("v1", "fs-1", tmp), "never waits for the walk");
    long first = awaitValue(w, "v1", tmp).orElseThrow();
    assertTrue(first >= 300_000, "du counted the file: " + first);

    Files.write(tmp.resolve("b"), new byte[500_000]);
    Thread.sleep(100);
    assertEquals(first, w.usedBytes("v1", "fs-1", tmp).getAsLong(), "cached within the period");
    now[0] = now[0].plus(Duration.ofMinutes(241));
    w.usedBytes("v1", "fs-1", tmp); // stale: a new walk starts, the old value is returned meanwhile
    for (int i = 0; i < 200 && w.usedBytes("v1", "fs-1", tmp).getAsLong() == first; i++) {
      Thread.sleep(20);
    }
    assertTrue(w.usedBytes("v1", "fs-1", tmp).getAsLong() >= 800_000);
    w.forget("v1");
  }

  @Test
  void aMissingPathGivesNoValueAndNoCrash() throws Exception {
    UsageWalks w =
        new UsageWalks(Duration.ofMinutes(1), 1, Duration.ofSeconds(5), Clock.systemUTC());
    assertEquals(OptionalLong.empty(), w.usedBytes("v2", "fs-1", tmp.resolve("gone")));
    Thread.sleep(300);
    assertEquals(OptionalLong.empty(), w.usedBytes("v2", "fs-1", tmp.resolve("gone")));
  }
}

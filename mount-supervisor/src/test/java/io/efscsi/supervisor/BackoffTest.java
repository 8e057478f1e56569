package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Test
  void doublesToTheCapAndResetsAfterAHealthyRun() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30), Duration.ofSeconds(60));
    Instant t = Instant.parse("2026-01-01T00:00:00Z");
    long[] expected = {100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
    for (long ms : expected) {
      assertEquals(Duration.ofMillis(ms), b.next(t, t.plusSeconds(1)));
    }
    // ran for a minute: back to the start
    assertEquals(Duration.ofMillis(100), b.next(t, t.plusSeconds(61)));
    assertEquals(Duration.ofMillis(200), b.next(t, t.plusSeconds(1)));
  }
}

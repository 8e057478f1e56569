package io.efscsi.common.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ReadinessTest {

  /** A clock the test moves by hand. */
  static final class ManualClock extends Clock {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private final ManualClock clock = new ManualClock();
  private final Readiness readiness = new Readiness(clock, Duration.ofSeconds(1));

  @Test
  void readyWithNoChecks() {
    assertTrue(readiness.evaluate().ready());
  }

  @Test
  void gateFlipsFromWaitingToReady() {
    Readiness.Gate gate = readiness.gate("cloud client", "not built yet");
    Readiness.State before = readiness.evaluate();
    assertFalse(before.ready());
    assertEquals(List.of("cloud client: not built yet"), before.reasons());
    gate.open();
    assertTrue(readiness.evaluate().ready(), "opening a gate is seen at once, not after the cache");
    gate.fail("region unknown");
    assertEquals(List.of("cloud client: region unknown"), readiness.evaluate().reasons());
  }

  @Test
  void checksAreCachedBriefly() {
    AtomicInteger calls = new AtomicInteger();
    readiness.add(
        new Readiness.Check() {
          @Override
          public String name() {
            return "counted";
          }

          @Override
          public String notReadyReason() {
            calls.incrementAndGet();
            return null;
          }
        });
    readiness.evaluate();
    readiness.evaluate();
    assertEquals(1, calls.get());
    clock.now = clock.now.plusMillis(1001);
    readiness.evaluate();
    assertEquals(2, calls.get());
  }

  @Test
  void aThrowingCheckMeansNotReadyWithTheReason() {
    readiness.add(
        new Readiness.Check() {
          @Override
          public String name() {
            return "state dir";
          }

          @Override
          public String notReadyReason() {
            throw new IllegalStateException("boom");
          }
        });
    Readiness.State s = readiness.evaluate();
    assertFalse(s.ready());
    assertTrue(s.reasons().getFirst().contains("boom"));
  }

  @Test
  void shuttingDownIsNotReady() {
    assertTrue(readiness.evaluate().ready());
    readiness.shuttingDown();
    assertEquals(List.of("shutting down"), readiness.evaluate().reasons());
  }
}

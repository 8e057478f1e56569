package io.efscsi.controller.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AdaptiveConcurrencyTest {

  final AtomicLong now = new AtomicLong(1_000_000_000L);

  AdaptiveConcurrency gate(int initial, int max) {
    return new AdaptiveConcurrency(initial, max, Duration.ofSeconds(5), now::get);
  }

  @Test
  void throttlingShrinksTheWindowOncePerSpacingAndSuccessGrowsItBack() {
    AdaptiveConcurrency g = gate(10, 20);
    for (int i = 0; i < 5; i++) {
      g.acquire(Long.MAX_VALUE);
    }
    for (int i = 0; i < 5; i++) {
      g.release(true); // one congestion event: five throttled answers at once
    }
    assertEquals(7.0, g.window(), 1e-9, "cut by 30% once, not five times");
    now.addAndGet(AdaptiveConcurrency.DECREASE_SPACING.toNanos());
    g.acquire(Long.MAX_VALUE);
    g.release(true);
    assertEquals(4.9, g.window(), 1e-9);
    for (int i = 0; i < 200; i++) {
      g.acquire(Long.MAX_VALUE);
      g.release(false);
    }
    assertTrue(g.window() > 15, "additive increase: " + g.window());
    for (int i = 0; i < 2000; i++) {
      g.acquire(Long.MAX_VALUE);
      g.release(false);
    }
    assertEquals(20.0, g.window(), 1e-9, "never above max");
  }

  @Test
  void theWindowNeverFallsBelowOneRequest() {
    AdaptiveConcurrency g = gate(2, 4);
    for (int i = 0; i < 50; i++) {
      now.addAndGet(AdaptiveConcurrency.DECREASE_SPACING.toNanos());
      g.acquire(Long.MAX_VALUE);
      g.release(true);
    }
    assertEquals(1.0, g.window(), 1e-9);
  }

  @Test
  void aFullWindowMakesTheNextRequestWaitForAReleaseOrFailAtItsDeadline() throws Exception {
    AdaptiveConcurrency g = gate(1, 1);
    g.acquire(Long.MAX_VALUE);
    AdaptiveConcurrency.WindowFull e =
        assertThrows(AdaptiveConcurrency.WindowFull.class, () -> g.acquire(now.get()));
    assertTrue(e.getMessage().contains("1 requests in flight"), e.getMessage());

    CountDownLatch got = new CountDownLatch(1);
    Thread waiter =
        Thread.ofVirtual()
            .start(() -> {
              g.acquire(Long.MAX_VALUE);
              got.countDown();
            });
    assertTrue(!got.await(200, TimeUnit.MILLISECONDS), "waits while the window is full");
    g.release(false);
    assertTrue(got.await(5, TimeUnit.SECONDS), "gets the freed slot");
    waiter.join();
  }

  @Test
  void refusesAWindowThatCannotWork() {
    assertThrows(IllegalArgumentException.class, () -> gate(0, 4));
    assertThrows(IllegalArgumentException.class, () -> gate(5, 4));
  }
}

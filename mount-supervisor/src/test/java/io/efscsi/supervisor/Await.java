package io.efscsi.supervisor;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting in supervisor tests for what the supervisor's own threads do. */
final class Await {

  private Await() {}

  /** Polls {@code cond} every 10 ms for up to 10 s; fails naming {@code what}. */
  static void until(String what, BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }
}

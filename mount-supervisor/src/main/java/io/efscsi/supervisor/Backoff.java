package io.efscsi.supervisor;

import java.time.Duration;
import java.time.Instant;

/**
 * Restart delays: {@code initial} after the first exit, doubling up to {@code max}; back to {@code
 * initial} once the proxy ran healthy for {@code resetAfter}. Not thread-safe (one per proxy, used
 * under its lock).
 */
public final class Backoff {

  private final Duration initial;
  private final Duration max;
  private final Duration resetAfter;
  private int attempts;

  public Backoff(Duration initial, Duration max, Duration resetAfter) {
    this.initial = initial;
    this.max = max;
    this.resetAfter = resetAfter;
  }

  /**
   * The delay before the next start, for a process that started at {@code lastStart} and exited at
   * {@code now}.
   */
  public Duration next(Instant lastStart, Instant now) {
    if (lastStart != null && Duration.between(lastStart, now).compareTo(resetAfter) >= 0) {
      attempts = 0;
    }
    Duration d = initial.multipliedBy(1L << Math.min(attempts, 20));
    attempts++;
    return d.compareTo(max) > 0 ? max : d;
  }

  /** Consecutive quick exits so far. */
  public int attempts() {
    return attempts;
  }
}

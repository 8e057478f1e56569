package io.efscsi.supervisor;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A proxy's restarts after an exit: the backoff's delay, the one restart waiting for it, and when
 * quick exits in a row make the proxy crash-looping. Used under its {@link Supervised}'s lock.
 */
final class RestartTimer {

  private static final Logger LOG = LoggerFactory.getLogger(RestartTimer.class);

  /** Quick exits in a row after which a proxy is crash-looping. */
  static final int CRASH_LOOP_ATTEMPTS = 5;

  private final ProxyContext ctx;
  private final Backoff backoff;
  private ScheduledFuture<?> pending;

  RestartTimer(ProxyContext ctx) {
    this.ctx = ctx;
    SupervisorConfig c = ctx.config();
    this.backoff = new Backoff(c.backoffInitial(), c.backoffMax(), c.backoffReset());
  }

  /**
   * Runs {@code restart} (through the supervisor, on a thread of its own) after the backoff's delay
   * for a process that started at {@code startedAt} and exited now; whether the quick exits so far
   * make the proxy crash-looping.
   */
  boolean schedule(Instant startedAt, int port, Runnable restart) {
    Duration delay = backoff.next(startedAt, ctx.clock().instant());
    try {
      pending =
          ctx.scheduler()
              .schedule(
                  () -> ctx.owner().runRestart(restart), delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closed) {
      LOG.info("proxy for port {} not restarted: the supervisor is closed", port);
    }
    return backoff.attempts() >= CRASH_LOOP_ATTEMPTS;
  }

  /** Consecutive quick exits so far. */
  int attempts() {
    return backoff.attempts();
  }

  /** Cancels the restart waiting for its delay, if any. */
  void cancel() {
    if (pending != null) {
      pending.cancel(false);
      pending = null;
    }
  }
}

package io.efscsi.proxy;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logging for an unreachable upstream. The kernel's NFS client reconnects at once when we close its
 * connection, some hundred times a second while the mount target is gone, and every reconnect tries
 * the upstream again: the first failure is logged with its cause, then one summary per {@code
 * reportEvery}, then the recovery, not a line per reconnect.
 *
 * <p>The reconnects stop soon: the first failure runs {@link #whenDown}, and the proxy's {@link
 * ListenerGate} refuses connections until the upstream answers again. (Accepting them and closing
 * them at once without trying the upstream was tried too: the kernel reconnected almost three times
 * as often and a soft mount's call met EIO no sooner.)
 */
final class UpstreamOutage {

  private static final Logger log = LoggerFactory.getLogger(UpstreamOutage.class);

  private final LongSupplier nanoTime;
  private final long reportEveryNanos;
  private boolean down;
  private long downSince;
  private long lastReport;
  private long failedSinceReport;
  private String lastError = "";
  private volatile Runnable whenDown = () -> {};

  UpstreamOutage(LongSupplier nanoTime, long reportEveryMillis) {
    this.nanoTime = nanoTime;
    this.reportEveryNanos = TimeUnit.MILLISECONDS.toNanos(reportEveryMillis);
  }

  static UpstreamOutage standard() {
    return new UpstreamOutage(System::nanoTime, 30_000);
  }

  /** What to do each time the upstream goes from reachable to unreachable. */
  void whenDown(Runnable action) {
    this.whenDown = action;
  }

  /** Whether the last attempt failed. */
  synchronized boolean isDown() {
    return down;
  }

  /** Failures since the last report (tests). */
  synchronized long failedSinceReport() {
    return failedSinceReport;
  }

  synchronized void succeeded() {
    if (down) {
      log.info(
          "upstream reachable again after {} s ({} failed attempts since the last report)",
          TimeUnit.NANOSECONDS.toSeconds(nanoTime.getAsLong() - downSince),
          failedSinceReport);
      down = false;
      failedSinceReport = 0;
    }
  }

  synchronized void failed(String error) {
    long now = nanoTime.getAsLong();
    lastError = error;
    if (!down) {
      down = true;
      downSince = now;
      lastReport = now;
      log.warn(
          "no upstream: {} (a summary follows every {} s)",
          error,
          TimeUnit.NANOSECONDS.toSeconds(reportEveryNanos));
      whenDown.run();
      return;
    }
    failedSinceReport++;
    if (now - lastReport >= reportEveryNanos) {
      log.warn(
          "upstream still unreachable after {} s: {} ({} failed attempts since the last report)",
          TimeUnit.NANOSECONDS.toSeconds(now - downSince),
          lastError,
          failedSinceReport);
      lastReport = now;
      failedSinceReport = 0;
    }
  }
}

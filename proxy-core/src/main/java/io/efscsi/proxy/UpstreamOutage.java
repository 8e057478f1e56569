package io.efscsi.proxy;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the proxy knows about its upstream being unreachable. The kernel's NFS client reconnects at
 * once when we close its connection, hundreds of times a second while the mount target is gone; so
 * after a failed upstream connection, new kernel connections are closed at once (with a FIN, as any
 * other) and at most one per {@code probeEvery} tries the upstream again. The first failure is
 * logged, then one summary per {@code reportEvery}, then the recovery: not a line per reconnect.
 */
final class UpstreamOutage {

  private static final Logger log = LoggerFactory.getLogger(UpstreamOutage.class);

  /** Never gates and never logs (tests of other behaviour). */
  static UpstreamOutage none() {
    return new UpstreamOutage(System::nanoTime, 0, Long.MAX_VALUE);
  }

  private final LongSupplier nanoTime;
  private final long probeEveryNanos;
  private final long reportEveryNanos;
  private boolean down;
  private long downSince;
  private long lastAttempt;
  private long lastReport;
  private long closedSinceReport;
  private long failedSinceReport;
  private String lastError = "";

  UpstreamOutage(LongSupplier nanoTime, long probeEveryMillis, long reportEveryMillis) {
    this.nanoTime = nanoTime;
    this.probeEveryNanos = TimeUnit.MILLISECONDS.toNanos(probeEveryMillis);
    this.reportEveryNanos =
        reportEveryMillis == Long.MAX_VALUE
            ? Long.MAX_VALUE
            : TimeUnit.MILLISECONDS.toNanos(reportEveryMillis);
  }

  static UpstreamOutage standard() {
    return new UpstreamOutage(System::nanoTime, 1000, 30_000);
  }

  /** Whether a new kernel connection may try the upstream; false: close it at once. */
  synchronized boolean mayAttempt() {
    long now = nanoTime.getAsLong();
    if (!down || now - lastAttempt >= probeEveryNanos) {
      lastAttempt = now;
      return true;
    }
    closedSinceReport++;
    report(now);
    return false;
  }

  /** Whether the upstream is known to be unreachable right now. */
  synchronized boolean isDown() {
    return down;
  }

  synchronized void succeeded() {
    if (down) {
      long now = nanoTime.getAsLong();
      log.info(
          "upstream reachable again after {} s down ({} kernel connections closed at once and {}"
              + " more failed attempts since the last report)",
          TimeUnit.NANOSECONDS.toSeconds(now - downSince),
          closedSinceReport,
          failedSinceReport);
      down = false;
      closedSinceReport = 0;
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
          "no upstream: {}; until it answers, kernel connections are closed at once and the"
              + " upstream is tried at most every {} ms",
          error,
          TimeUnit.NANOSECONDS.toMillis(probeEveryNanos));
      return;
    }
    failedSinceReport++;
    report(now);
  }

  private void report(long now) {
    if (reportEveryNanos != Long.MAX_VALUE && now - lastReport >= reportEveryNanos) {
      log.warn(
          "upstream still unreachable after {} s: {} ({} kernel connections closed at once, {}"
              + " failed attempts since the last report)",
          TimeUnit.NANOSECONDS.toSeconds(now - downSince),
          lastError,
          closedSinceReport,
          failedSinceReport);
      lastReport = now;
      closedSinceReport = 0;
      failedSinceReport = 0;
    }
  }
}

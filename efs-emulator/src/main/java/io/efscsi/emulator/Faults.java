package io.efscsi.emulator;

import io.efscsi.emulator.EfsState.EfsError;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Faults the emulator injects into EFS requests, before handling them: a number of throttled
 * answers (429 ThrottlingException), a share of throttled answers, a number of 500s, a fixed
 * latency, and access keys that get AccessDenied.
 */
public final class Faults {

  private final AtomicInteger throttleNext = new AtomicInteger();
  private final AtomicInteger failNext = new AtomicInteger();
  private volatile double throttleShare;
  private volatile Duration latency = Duration.ZERO;
  final Set<String> deniedKeys = ConcurrentHashMap.newKeySet();

  /** The next {@code n} EFS requests are throttled. */
  public Faults throttleNext(int n) {
    throttleNext.set(n);
    return this;
  }

  /** Each EFS request is throttled with this probability (0 to 1). */
  public Faults throttleShare(double share) {
    throttleShare = share;
    return this;
  }

  /** The next {@code n} EFS requests fail with 500 InternalServerError. */
  public Faults failNext(int n) {
    failNext.set(n);
    return this;
  }

  /** Every EFS request waits this long first. */
  public Faults latency(Duration d) {
    latency = d;
    return this;
  }

  /** Requests signed with this access key get 403 AccessDeniedException. */
  public Faults deny(String accessKeyId) {
    deniedKeys.add(accessKeyId);
    return this;
  }

  /** Clears every fault. */
  public Faults clear() {
    throttleNext.set(0);
    failNext.set(0);
    throttleShare = 0;
    latency = Duration.ZERO;
    deniedKeys.clear();
    return this;
  }

  void apply() {
    Duration d = latency;
    if (!d.isZero()) {
      try {
        Thread.sleep(d);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (takeOne(throttleNext)
        || (throttleShare > 0 && ThreadLocalRandom.current().nextDouble() < throttleShare)) {
      throw new EfsError(429, "ThrottlingException", "Rate exceeded");
    }
    if (takeOne(failNext)) {
      throw new EfsError(500, "InternalServerError", "injected server error");
    }
  }

  private static boolean takeOne(AtomicInteger counter) {
    return counter.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
  }
}

package io.efscsi.emulator;

import io.efscsi.emulator.EfsState.EfsError;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Faults the emulator injects into EFS requests, before handling them: a number of throttled
 * answers (429 ThrottlingException), a share of throttled answers, a request rate above which
 * requests are throttled (as the EFS API throttles: a token bucket per account and region), a
 * number of 500s, a fixed latency (for every request, or for one action's), and access keys that
 * get AccessDenied.
 */
public final class Faults {

  private final AtomicInteger throttleNext = new AtomicInteger();
  private final AtomicInteger failNext = new AtomicInteger();
  private volatile double throttleShare;
  private volatile Duration latency = Duration.ZERO;
  private final java.util.Map<String, Duration> actionLatency = new ConcurrentHashMap<>();
  private volatile TokenBucket rate;
  private final java.util.concurrent.atomic.LongAdder throttled =
      new java.util.concurrent.atomic.LongAdder();
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

  /**
   * Requests beyond {@code perSecond} a second, after a burst of {@code burst}, are throttled (a
   * token bucket refilled continuously); {@code perSecond <= 0} lifts the limit.
   */
  public Faults rateLimit(double perSecond, int burst) {
    rate = perSecond > 0 ? new TokenBucket(perSecond, burst) : null;
    return this;
  }

  /** How many requests were throttled so far (every cause). */
  public long throttled() {
    return throttled.sum();
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

  /**
   * Every request of {@code action} (such as DescribeMountTargets) waits this long first, on top of
   * {@link #latency(Duration)}; zero lifts it.
   */
  public Faults latency(String action, Duration d) {
    if (d.isZero()) {
      actionLatency.remove(action);
    } else {
      actionLatency.put(action, d);
    }
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
    rate = null;
    latency = Duration.ZERO;
    actionLatency.clear();
    deniedKeys.clear();
    return this;
  }

  void apply(String action) {
    Duration d = latency.plus(actionLatency.getOrDefault(action, Duration.ZERO));
    if (!d.isZero()) {
      try {
        Thread.sleep(d);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    TokenBucket bucket = rate;
    if (takeOne(throttleNext)
        || (throttleShare > 0 && ThreadLocalRandom.current().nextDouble() < throttleShare)
        || (bucket != null && !bucket.take())) {
      throttled.increment();
      throw new EfsError(429, "ThrottlingException", "Rate exceeded");
    }
    if (takeOne(failNext)) {
      throw new EfsError(500, "InternalServerError", "injected server error");
    }
  }

  private static boolean takeOne(AtomicInteger counter) {
    return counter.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
  }

  /** Tokens refilled at a steady rate up to a burst; one request takes one. */
  private static final class TokenBucket {
    private final double perNano;
    private final double burst;
    private double tokens;
    private long last = System.nanoTime();

    TokenBucket(double perSecond, int burst) {
      this.perNano = perSecond / 1e9;
      this.burst = Math.max(1, burst);
      this.tokens = this.burst;
    }

    synchronized boolean take() {
      long now = System.nanoTime();
      tokens = Math.min(burst, tokens + (now - last) * perNano);
      last = now;
      if (tokens < 1) {
        return false;
      }
      tokens -= 1;
      return true;
    }
  }
}

package io.efscsi.controller.cloud;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/**
 * Client-side adaptive rate limiting for one AWS client ({@code --adaptive-retry-mode}): a window
 * of requests in flight that shrinks by 30% on a throttled answer (at most once per {@link
 * #DECREASE_SPACING}) and grows by one per window of successful answers (AIMD, as TCP does), with
 * the SDK's standard retries under it. A request that finds the window full waits for a slot, at
 * most {@code maxWait} from the start of its API call, and then fails as throttled (the controller
 * answers UNAVAILABLE, the provisioner retries).
 *
 * <p>Not the SDK's adaptive retry strategy: that one books every waiting request's start time at
 * the rate it knows when the request arrives. After a burst of throttling its rate falls to its
 * floor (0.5 requests a second) and the thousandth of a thousand CreateVolume calls is booked 2,000
 * seconds ahead, however fast the rate recovers (ControllerStormIT measured one access point every
 * 2 s for 20 minutes against an API that allowed 50 a second).
 */
public final class AdaptiveConcurrency implements ExecutionInterceptor {

  /** The request waited for a slot longer than allowed: counts as throttled. */
  public static final class WindowFull extends SdkClientException {
    private static final long serialVersionUID = 1L;

    WindowFull(String message) {
      super(SdkClientException.builder().message(message));
    }
  }

  static final Duration DECREASE_SPACING = Duration.ofMillis(200);
  private static final ExecutionAttribute<Long> CALL_STARTED =
      new ExecutionAttribute<>("efscsi.gate.started");
  private static final ExecutionAttribute<Boolean> HOLDS =
      new ExecutionAttribute<>("efscsi.gate.holds");

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition freed = lock.newCondition();
  private final double min;
  private final double max;
  private final long maxWaitNanos;
  private final LongSupplier nanoTime;
  private double window;
  private int inFlight;
  private int waiting;
  private long lastDecrease;

  /**
   * @param initial the window at start
   * @param max the largest window
   * @param maxWait how long an API call may wait for a slot in all, from its start
   */
  public AdaptiveConcurrency(int initial, int max, Duration maxWait, LongSupplier nanoTime) {
    if (initial < 1 || max < initial) {
      throw new IllegalArgumentException(
          "window must satisfy 1 <= initial <= max, got " + initial + " and " + max);
    }
    this.min = 1;
    this.max = max;
    this.window = initial;
    this.maxWaitNanos = maxWait.toNanos();
    this.nanoTime = nanoTime;
    this.lastDecrease = nanoTime.getAsLong() - DECREASE_SPACING.toNanos();
  }

  /** The window now (requests allowed in flight). */
  public double window() {
    lock.lock();
    try {
      return window;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    attributes.putAttribute(CALL_STARTED, nanoTime.getAsLong());
  }

  @Override
  public void beforeTransmission(
      Context.BeforeTransmission context, ExecutionAttributes attributes) {
    if (Boolean.TRUE.equals(attributes.getAttribute(HOLDS))) {
      done(attributes, false); // the previous attempt got no answer (an I/O error)
    }
    Long started = attributes.getAttribute(CALL_STARTED);
    long deadline = (started == null ? nanoTime.getAsLong() : started) + maxWaitNanos;
    acquire(deadline);
    attributes.putAttribute(HOLDS, true);
  }

  @Override
  public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
    int status = context.httpResponse().statusCode();
    done(attributes, status == 429 || status == 503);
  }

  @Override
  public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
    if (Boolean.TRUE.equals(attributes.getAttribute(HOLDS))) {
      done(attributes, false);
    }
  }

  void acquire(long deadlineNanos) {
    lock.lock();
    try {
      waiting++;
      try {
        while (inFlight >= Math.floor(window)) {
          long left = deadlineNanos - nanoTime.getAsLong();
          if (left <= 0) {
            throw new WindowFull(
                String.format(
                    java.util.Locale.ROOT,
                    "AWS is throttling this controller: %d requests in flight (window %.1f),"
                        + " %d waiting",
                    inFlight,
                    window,
                    waiting));
          }
          freed.await(left, TimeUnit.NANOSECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw SdkClientException.create("interrupted while waiting to call AWS", e);
      } finally {
        waiting--;
      }
      inFlight++;
    } finally {
      lock.unlock();
    }
  }

  private void done(ExecutionAttributes attributes, boolean throttled) {
    attributes.putAttribute(HOLDS, false);
    release(throttled);
  }

  void release(boolean throttled) {
    lock.lock();
    try {
      inFlight--;
      long now = nanoTime.getAsLong();
      if (throttled) {
        if (now - lastDecrease >= DECREASE_SPACING.toNanos()) {
          window = Math.max(min, window * 0.7);
          lastDecrease = now;
        }
      } else {
        window = Math.min(max, window + 1 / window);
      }
      freed.signalAll();
    } finally {
      lock.unlock();
    }
  }
}

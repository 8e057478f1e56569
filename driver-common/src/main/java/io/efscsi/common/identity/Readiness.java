package io.efscsi.common.identity;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this process's own dependencies are up (controller: cloud client built; node: supervisor
 * started, state dir writable). It answers CSI Probe and {@code /healthz}.
 *
 * <p>Probe is about the plugin, never about one volume: a sick volume must not appear here, or the
 * liveness sidecar would turn one bad mount into a node-wide restart loop.
 */
public final class Readiness {

  private static final Logger log = LoggerFactory.getLogger(Readiness.class);

  /** One dependency of the process. Checks must be fast and must never touch an NFS path. */
  public interface Check {
    String name();

    /** {@code null} when ready, otherwise why not. */
    String notReadyReason();
  }

  /** The outcome of one evaluation. */
  public record State(boolean ready, List<String> reasons) {}

  private final List<Check> checks = new CopyOnWriteArrayList<>();
  private final Clock clock;
  private final Duration cacheFor;
  private volatile State last;
  private volatile Instant lastAt = Instant.MIN;
  private volatile boolean shuttingDown;

  public Readiness(Clock clock, Duration cacheFor) {
    this.clock = clock;
    this.cacheFor = cacheFor;
  }

  public Readiness() {
    this(Clock.systemUTC(), Duration.ofMillis(500));
  }

  /** Adds a check evaluated on every (cached) evaluation. */
  public void add(Check check) {
    checks.add(check);
    invalidate();
  }

  /**
   * Adds a one-way gate: not ready ({@code waitingReason}) until {@link Gate#open()} is called or
   * ready with a failure reason after {@link Gate#fail(String)}.
   */
  public Gate gate(String name, String waitingReason) {
    Gate gate = new Gate(name, waitingReason);
    add(gate);
    return gate;
  }

  /** Marks the process as shutting down: not ready from now on. */
  public void shuttingDown() {
    shuttingDown = true;
    invalidate();
  }

  /** Evaluates the checks (cached for a short while) and logs every change of state. */
  public State evaluate() {
    Instant now = clock.instant();
    State cached = last;
    if (cached != null && now.isBefore(lastAt.plus(cacheFor))) {
      return cached;
    }
    List<String> reasons = new ArrayList<>();
    if (shuttingDown) {
      reasons.add("shutting down");
    }
    for (Check c : checks) {
      String why;
      try {
        why = c.notReadyReason();
      } catch (RuntimeException e) {
        why = "check failed: " + e;
      }
      if (why != null) {
        reasons.add(c.name() + ": " + why);
      }
    }
    State state = new State(reasons.isEmpty(), List.copyOf(reasons));
    if (cached == null || !cached.equals(state)) {
      if (state.ready()) {
        log.info("plugin is ready");
      } else {
        log.info("plugin is not ready: {}", String.join("; ", state.reasons()));
      }
    }
    last = state;
    lastAt = now;
    return state;
  }

  private void invalidate() {
    lastAt = Instant.MIN;
  }

  /** A dependency that becomes ready once, for example a client that has been built. */
  public final class Gate implements Check {
    private final String name;
    private volatile String reason;

    private Gate(String name, String waitingReason) {
      this.name = name;
      this.reason = waitingReason;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String notReadyReason() {
      return reason;
    }

    public void open() {
      reason = null;
      invalidate();
    }

    public void fail(String why) {
      reason = why;
      invalidate();
    }
  }
}

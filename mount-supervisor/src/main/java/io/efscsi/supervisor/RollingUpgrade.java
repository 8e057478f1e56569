package io.efscsi.supervisor;

import io.efscsi.supervisor.ProxyStatus.State;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves proxies running another build to this plugin's ({@link ProxyMove}) after an upgrade (or a
 * rollback) of the plugin: at most one at a time, the next stale one by port each round, rounds
 * {@link SupervisorConfig.Upgrades#interval} apart from the end of one move.
 *
 * <p>A proxy is left alone while it heals or cannot move: not running steadily, crash-looping,
 * failing its health rounds, its mount target unreachable, no user or no mount (the reconciler's to
 * stop). A proxy whose move failed is not tried again for {@link #RETRY_FAILED}, one whose move was
 * skipped (its socket could not be taken) for {@link #RETRY_SKIPPED}. Three failed moves in a row,
 * or a moved proxy found unhealthy at the next round, stop the roll until the plugin restarts: a
 * bad build then costs one proxy, not the node.
 */
final class RollingUpgrade {

  private static final Logger LOG = LoggerFactory.getLogger(RollingUpgrade.class);

  static final Duration RETRY_FAILED = Duration.ofHours(1);
  static final Duration RETRY_SKIPPED = Duration.ofMinutes(10);
  static final int FAILURES_BEFORE_STOP = 3;

  private final ProxyContext ctx;
  private final ProxyContext.Fleet fleet;
  private final ProxyMove mover;
  private final Map<Integer, Instant> notBefore = new HashMap<>();
  private final Map<Integer, String> waiting = new HashMap<>();
  private int failuresInARow;
  private String stoppedBecause = "";
  private Supervised lastMoved;
  private long lastMovedPid;

  RollingUpgrade(ProxyContext ctx, ProxyContext.Fleet fleet) {
    this.ctx = ctx;
    this.fleet = fleet;
    this.mover = new ProxyMove(ctx);
  }

  /** Why the roll stopped, empty while it runs. */
  synchronized String stoppedBecause() {
    return stoppedBecause;
  }

  /** One round: counts stale proxies and moves at most one. Never throws. */
  synchronized void round() {
    try {
      roundOrThrow();
    } catch (IOException | RuntimeException e) {
      LOG.warn("proxy upgrade round failed: {}", e.toString());
    }
  }

  private void roundOrThrow() throws IOException {
    String build = ctx.launcher().build();
    if (build.isEmpty()) {
      return;
    }
    List<Supervised> stale =
        fleet.all().stream()
            .filter(s -> !build.equals(s.record().proxyBuild()))
            .sorted(Comparator.comparingInt(Supervised::port))
            .toList();
    ctx.stats().staleProxies.set(stale.size());
    if (!ctx.config().upgrades().rolling() || !stoppedBecause.isEmpty() || !soaked()) {
      return;
    }
    Set<Integer> mounted = fleet.mountedPorts();
    Instant now = ctx.clock().instant();
    for (Supervised s : stale) {
      if (movable(s, mounted, now)) {
        move(s, now);
        return;
      }
    }
  }

  private boolean movable(Supervised s, Set<Integer> mounted, Instant now) {
    String why = whyNotNow(s, mounted, now);
    String before = waiting.put(s.port(), why);
    if (!why.isEmpty() && !why.equals(before)) {
      LOG.info("proxy for port {} runs another build; not moved yet: {}", s.port(), why);
    }
    return why.isEmpty();
  }

  /** Why a stale proxy cannot move this round, empty when it can. */
  private String whyNotNow(Supervised s, Set<Integer> mounted, Instant now) {
    ProxyStatus st = s.status();
    Instant after = notBefore.get(s.port());
    if (st.state() != State.RUNNING || s.retired()) {
      return "it is " + st.state().toString().toLowerCase(java.util.Locale.ROOT);
    }
    if (st.crashLooping()) {
      return "it is crash-looping";
    }
    if (st.targetUnreachableSince().isPresent()) {
      return "its mount target is unreachable";
    }
    if (s.healthFailing()) {
      return "its last health round failed";
    }
    if (!s.record().wanted() || !mounted.contains(s.port())) {
      return "no mount uses it (the reconciler's to stop)";
    }
    if (after != null && now.isBefore(after)) {
      return "its last move did not succeed; next try at " + after;
    }
    return "";
  }

  private void move(Supervised s, Instant now) {
    ProxyMove.Outcome o = mover.run(s);
    String key = s.record().key();
    switch (o.result()) {
      case MOVED -> {
        ctx.stats().staleProxies.decrementAndGet();
        failuresInARow = 0;
        notBefore.remove(s.port());
        lastMoved = s;
        lastMovedPid = o.newPid();
        ctx.stats().proxyMoves.incrementAndGet();
        ctx.stats().lastMoveMillis.set(o.took().toMillis());
        ctx.listener()
            .upgraded(key, s.port(), o.from(), ctx.launcher().build(), o.took(), o.connections());
      }
      case FAILED -> {
        failuresInARow++;
        notBefore.put(s.port(), now.plus(RETRY_FAILED));
        ctx.stats().proxyMoveFailures.incrementAndGet();
        ctx.listener().upgradeFailed(key, s.port(), o.reason() + ": " + o.detail());
        if (failuresInARow >= FAILURES_BEFORE_STOP) {
          stop(failuresInARow + " moves failed in a row; the last: " + o.detail());
        }
      }
      case SKIPPED -> {
        // busy (not steady, status unanswered) and refusing (target down) clear by themselves: the
        // next round tries again; a socket that cannot be taken waits
        if (!o.reason().equals("busy") && !o.reason().equals("refusing")) {
          notBefore.put(s.port(), now.plus(RETRY_SKIPPED));
          ctx.stats().proxyMoveSkips.incrementAndGet();
        }
        LOG.info("proxy for port {} not moved ({}): {}", s.port(), o.reason(), o.detail());
      }
    }
  }

  /** The proxy moved last still runs the process it was moved to and passes its health rounds. */
  private boolean soaked() {
    if (lastMoved == null) {
      return true;
    }
    Supervised s = lastMoved;
    if (s.retired()) {
      lastMoved = null;
      return true;
    }
    ProxyStatus st = s.status();
    if (st.state() == State.RUNNING && st.pid() == lastMovedPid && !s.healthFailing()) {
      lastMoved = null;
      return true;
    }
    if (st.state() == State.RUNNING && st.pid() == lastMovedPid) {
      return false; // a failing round: wait for the next one before judging
    }
    stop(
        "the proxy moved last (port "
            + s.port()
            + ", pid "
            + lastMovedPid
            + ") did not stay up on the new build: "
            + st.lastExit().orElse(st.state().toString()));
    return false;
  }

  private void stop(String why) {
    stoppedBecause = why;
    LOG.error("rolling proxy upgrades stopped until the plugin restarts: {}", why);
    ctx.listener().upgradesStopped(why);
  }
}

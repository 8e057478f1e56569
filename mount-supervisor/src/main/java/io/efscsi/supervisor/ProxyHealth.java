package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.health.HealthVerdict;
import io.efscsi.supervisor.process.ControlClient;
import io.efscsi.supervisor.process.ProcessTable.Activity;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxy's health rounds: its control socket's {@code status}, then an NFS NULL ping through the
 * tunnel, judged by {@link HealthVerdict}. Two unanswered status requests in a row kill the proxy
 * so that it restarts on its port; so do the configured number of failed pings, but only when the
 * supervisor's own probe of the mount target succeeds. When that probe fails too, the mount target
 * is unreachable from the node: the proxy stays up, the listener hears it once (and once when the
 * target is back), and the log says it once with a summary every {@link #SUMMARY_EVERY}. A proxy
 * whose requests go unanswered (not refused) while its process keeps working is slow, not hung (a
 * node short of CPU): it is left up for the configured slow limit before either restart applies.
 */
final class ProxyHealth {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyHealth.class);
  static final int CONTROL_LIMIT = 2;
  static final Duration SUMMARY_EVERY = Duration.ofMinutes(5);

  private final Supervised proxy;
  private final ProxyContext ctx;
  private int statusFailures;
  private int pingFailures;
  private boolean upstreamHealthy = true;
  private Instant unreachableSince;
  private Instant lastSummary;
  private String lastFailure = "";

  /** When the current run of failed rounds began; null after a good round. */
  private Instant failingSince;

  /** The process's work at the last failed round of this run, to measure the next one against. */
  private Optional<Activity> lastActivity = Optional.empty();

  private Instant lastSlowLog;

  /** A failed check: why, and whether the proxy took the request but did not answer in time. */
  private record Failed(String why, boolean unanswered) {
    static Failed of(IOException e) {
      return new Failed(String.valueOf(e.getMessage()), e instanceof ControlClient.Unanswered);
    }
  }

  ProxyHealth(Supervised proxy, ProxyContext ctx) {
    this.proxy = proxy;
    this.ctx = ctx;
  }

  /** A fresh process: nothing failed yet. */
  synchronized void reset() {
    statusFailures = 0;
    pingFailures = 0;
    failingSince = null;
    lastActivity = Optional.empty();
  }

  /** An adopted process that did not answer its first status. */
  synchronized void adoptedWithoutAnswer(long pid) {
    statusFailures++;
    failingSince = ctx.clock().instant();
    lastActivity = ctx.processes().activity(pid);
  }

  /** Whether the last round failed (a status or a ping): a proxy mid-heal is not moved. */
  synchronized boolean failing() {
    return statusFailures > 0 || pingFailures > 0;
  }

  synchronized boolean upstreamHealthy() {
    return upstreamHealthy;
  }

  /** Since when the proxy's mount target has been unreachable from the node, if it is. */
  synchronized Optional<Instant> targetUnreachableSince() {
    return Optional.ofNullable(unreachableSince);
  }

  /** One round; does nothing unless the proxy is running. */
  void check() {
    OptionalLong pid = proxy.runningPid();
    if (proxy.moves().moving() || !proxy.runningAndAlive() || pid.isEmpty()) {
      return;
    }
    Failed statusFailure = null;
    try {
      ControlClient.ask(proxy.controlSocket(), "status", ctx.config().patience().controlTimeout());
    } catch (IOException e) {
      statusFailure = Failed.of(e);
    }
    boolean control = statusFailure != null;
    Failed failure = control ? statusFailure : ping();
    int statusRun;
    int pingRun;
    String slowWork = null;
    synchronized (this) {
      statusRun = control ? ++statusFailures : (statusFailures = 0);
      pingRun = control ? pingFailures : failure != null ? ++pingFailures : (pingFailures = 0);
      if (failure != null) {
        lastFailure = failure.why();
        slowWork = slowWork(pid.getAsLong(), failure);
      }
    }
    String[] probeFailure = {null};
    HealthVerdict verdict =
        HealthVerdict.decide(
            statusRun,
            CONTROL_LIMIT,
            pingRun,
            ctx.config().pingFailuresBeforeRestart(),
            slowWork != null,
            () -> {
              probeFailure[0] = ctx.probe().failure(config()).orElse(null);
              return probeFailure[0] == null;
            });
    if (verdict == HealthVerdict.RESTART_PROXY_BROKEN && targetUnreachableSince().isPresent()) {
      // the target has just come back: the proxy's next ping decides, not a restart
      verdict = ping() == null ? HealthVerdict.HEALTHY : verdict;
    }
    String why = failure == null ? null : failure.why();
    if (verdict == HealthVerdict.SLOW) {
      slow(control, statusRun, pingRun, why, slowWork);
      return;
    }
    act(verdict, control, statusRun, pingRun, why, probeFailure[0]);
  }

  /**
   * Called with the lock held after a failed round: what the process did since the run's previous
   * failed round, when the failure was an unanswered request from a process that kept working and
   * the run is younger than the slow limit; null otherwise (the usual verdicts apply).
   */
  private String slowWork(long pid, Failed failure) {
    Instant now = ctx.clock().instant();
    if (failingSince == null) {
      failingSince = now;
    }
    Optional<Activity> before = lastActivity;
    Optional<Activity> activity = ctx.processes().activity(pid);
    lastActivity = activity;
    if (!failure.unanswered()
        || activity.isEmpty()
        || !activity.get().workedSince(before)
        || Duration.between(failingSince, now).compareTo(ctx.config().patience().slowLimit())
            >= 0) {
      return null;
    }
    Activity a = activity.get();
    String cpu =
        before.isEmpty()
            ? ""
            : String.format(
                java.util.Locale.ROOT,
                "%d ms of CPU in the last %.1f s, ",
                (a.cpuTicks() - before.get().cpuTicks()) * 10,
                (a.atNanos() - before.get().atNanos()) / 1e9);
    return cpu + a.runnableThreads() + " thread(s) running or waiting for a CPU";
  }

  /** A restart was due but the proxy is slow, not hung: it stays up, said once a while. */
  private void slow(boolean control, int statusRun, int pingRun, String failure, String work) {
    ctx.stats().slowRounds.incrementAndGet();
    Instant now = ctx.clock().instant();
    Instant since;
    synchronized (this) {
      since = failingSince;
      if (lastSlowLog != null
          && !lastSlowLog.isBefore(since)
          && Duration.between(lastSlowLog, now).compareTo(SUMMARY_EVERY) < 0) {
        return;
      }
      lastSlowLog = now;
    }
    LOG.warn(
        "proxy for port {} answers late: its {} went unanswered {} rounds running for {} s (last:"
            + " {}), but its process keeps working ({}). The node is short of CPU; the proxy is"
            + " not hung and stays up; it is restarted only if this lasts {} s",
        proxy.port(),
        control ? "status requests" : "pings",
        control ? statusRun : pingRun,
        Duration.between(since, now).toSeconds(),
        failure,
        work,
        ctx.config().patience().slowLimit().toSeconds());
  }

  /** The proxy's ping through the tunnel: null when it answered, else why not. */
  private Failed ping() {
    try {
      String answer =
          ControlClient.ask(proxy.controlSocket(), "ping", ctx.config().healthInterval());
      return answer.startsWith("ok") ? null : new Failed(answer, false);
    } catch (IOException e) {
      return Failed.of(e);
    }
  }

  private void act(
      HealthVerdict verdict,
      boolean control,
      int statusRun,
      int pingRun,
      String failure,
      String probeFailure) {
    switch (verdict) {
      case HEALTHY -> healthy();
      case SUSPECT -> {
        synchronized (this) {
          if (!control) {
            upstreamHealthy = false;
          }
        }
        LOG.warn(
            "proxy for port {}: {} check failed ({} of {}): {}",
            proxy.port(),
            control ? "control" : "upstream",
            control ? statusRun : pingRun,
            control ? CONTROL_LIMIT : ctx.config().pingFailuresBeforeRestart(),
            failure);
      }
      case RESTART_CONTROL_DEAD, RESTART_PROXY_BROKEN -> {
        if (verdict == HealthVerdict.RESTART_PROXY_BROKEN) {
          synchronized (this) {
            upstreamHealthy = false;
          }
        }
        kill(
            verdict == HealthVerdict.RESTART_CONTROL_DEAD
                ? "its control socket did not answer " + statusRun + " times: " + failure
                : "its upstream pings failed "
                    + pingRun
                    + " times ("
                    + failure
                    + ") while the supervisor reaches the mount target itself");
      }
      case TARGET_UNREACHABLE -> unreachable(pingRun, failure, probeFailure);
    }
  }

  private ProxyConfig config() {
    return ProxyConfig.fromMap(proxy.record().config());
  }

  private void healthy() {
    Instant since;
    synchronized (this) {
      upstreamHealthy = true;
      pingFailures = 0;
      failingSince = null;
      lastActivity = Optional.empty();
      since = unreachableSince;
      unreachableSince = null;
    }
    if (since != null) {
      Duration down = Duration.between(since, ctx.clock().instant());
      LOG.info(
          "the mount target of the proxy for port {} answers again after {} s",
          proxy.port(),
          down.toSeconds());
      ctx.listener().targetReachable(proxy.record().key(), proxy.port(), down);
    }
  }

  private void unreachable(int pingRun, String failure, String probeFailure) {
    Instant now = ctx.clock().instant();
    boolean first;
    Instant since;
    synchronized (this) {
      upstreamHealthy = false;
      first = unreachableSince == null;
      if (first) {
        unreachableSince = now;
        lastSummary = now;
      }
      since = unreachableSince;
    }
    if (first) {
      ctx.stats().targetOutages.incrementAndGet();
      LOG.warn(
          "the mount target of the proxy for port {} is unreachable from this node: the proxy's"
              + " pings fail ({}) and so does the supervisor's own ({}). The proxy stays up and"
              + " refuses connections until the target answers; I/O on the volume fails (soft) or"
              + " waits (hard) meanwhile",
          proxy.port(),
          failure,
          probeFailure);
      ctx.listener().targetUnreachable(proxy.record().key(), proxy.port(), probeFailure);
      return;
    }
    boolean summary;
    synchronized (this) {
      summary = Duration.between(lastSummary, now).compareTo(SUMMARY_EVERY) >= 0;
      if (summary) {
        lastSummary = now;
      }
    }
    if (summary) {
      LOG.warn(
          "the mount target of the proxy for port {} is still unreachable after {} s ({} pings"
              + " failed running; last: {})",
          proxy.port(),
          Duration.between(since, now).toSeconds(),
          pingRun,
          lastFailure);
    }
  }

  private void kill(String why) {
    OptionalLong pid = proxy.runningPid();
    if (pid.isEmpty()) {
      return;
    }
    ctx.stats().healthRestarts.incrementAndGet();
    LOG.error(
        "proxy for port {} is unhealthy ({}); killing pid {} so it restarts",
        proxy.port(),
        why,
        pid.getAsLong());
    ctx.processes().signal(pid.getAsLong(), true);
  }
}

package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.health.HealthVerdict;
import io.efscsi.supervisor.process.ControlClient;
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
 * target is back), and the log says it once with a summary every {@link #SUMMARY_EVERY}.
 */
final class ProxyHealth {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyHealth.class);
  static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(2);
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

  ProxyHealth(Supervised proxy, ProxyContext ctx) {
    this.proxy = proxy;
    this.ctx = ctx;
  }

  /** A fresh process: nothing failed yet. */
  synchronized void reset() {
    statusFailures = 0;
    pingFailures = 0;
  }

  /** An adopted process that did not answer its first status. */
  synchronized void adoptedWithoutAnswer() {
    statusFailures++;
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
    if (proxy.moving() || !proxy.runningAndAlive()) {
      return;
    }
    String statusFailure = null;
    try {
      ControlClient.ask(proxy.controlSocket(), "status", CONTROL_TIMEOUT);
    } catch (IOException e) {
      statusFailure = String.valueOf(e.getMessage());
    }
    boolean control = statusFailure != null;
    String failure = control ? statusFailure : ping();
    int statusRun;
    int pingRun;
    synchronized (this) {
      statusRun = control ? ++statusFailures : (statusFailures = 0);
      pingRun = control ? pingFailures : failure != null ? ++pingFailures : (pingFailures = 0);
      if (failure != null) {
        lastFailure = failure;
      }
    }
    String[] probeFailure = {null};
    HealthVerdict verdict =
        HealthVerdict.decide(
            statusRun,
            CONTROL_LIMIT,
            pingRun,
            ctx.config().pingFailuresBeforeRestart(),
            () -> {
              probeFailure[0] = ctx.probe().failure(config()).orElse(null);
              return probeFailure[0] == null;
            });
    if (verdict == HealthVerdict.RESTART_PROXY_BROKEN && targetUnreachableSince().isPresent()) {
      // the target has just come back: the proxy's next ping decides, not a restart
      verdict = ping() == null ? HealthVerdict.HEALTHY : verdict;
    }
    act(verdict, control, statusRun, pingRun, failure, probeFailure[0]);
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

  /** The proxy's ping through the tunnel: null when it answered, else why not. */
  private String ping() {
    try {
      String answer =
          ControlClient.ask(proxy.controlSocket(), "ping", ctx.config().healthInterval());
      return answer.startsWith("ok") ? null : answer;
    } catch (IOException e) {
      return e.getMessage();
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

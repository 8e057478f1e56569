package io.efscsi.supervisor;

import io.efscsi.supervisor.process.ControlClient;
import java.io.IOException;
import java.time.Duration;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxy's health rounds: its control socket's {@code status}, then an upstream NULL ping
 * through the tunnel. Two failed status answers in a row, or the configured number of failed pings,
 * kill the proxy so that it restarts on its port.
 */
final class ProxyHealth {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyHealth.class);
  static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(2);

  private final Supervised proxy;
  private final ProxyContext ctx;
  private int statusFailures;
  private int pingFailures;
  private boolean upstreamHealthy = true;

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

  synchronized boolean upstreamHealthy() {
    return upstreamHealthy;
  }

  /** One round; does nothing unless the proxy is running. */
  void check() {
    if (!proxy.runningAndAlive()) {
      return;
    }
    try {
      ControlClient.ask(proxy.controlSocket(), "status", CONTROL_TIMEOUT);
      synchronized (this) {
        statusFailures = 0;
      }
    } catch (IOException e) {
      if (countFailure(true, e.getMessage())) {
        return;
      }
    }
    try {
      String answer =
          ControlClient.ask(proxy.controlSocket(), "ping", ctx.config().healthInterval());
      if (!answer.startsWith("ok")) {
        throw new IOException(answer);
      }
      synchronized (this) {
        pingFailures = 0;
        upstreamHealthy = true;
      }
    } catch (IOException e) {
      countFailure(false, e.getMessage());
    }
  }

  /** Counts a failed check; kills the proxy (and so restarts it) past the threshold. */
  private boolean countFailure(boolean control, String what) {
    OptionalLong pid = proxy.runningPid();
    if (pid.isEmpty()) {
      return true;
    }
    int n;
    int limit = control ? 2 : ctx.config().pingFailuresBeforeRestart();
    synchronized (this) {
      n = control ? ++statusFailures : ++pingFailures;
      if (!control) {
        upstreamHealthy = false;
      }
    }
    LOG.warn(
        "proxy for port {}: {} check failed ({} of {}): {}",
        proxy.port(),
        control ? "control" : "upstream",
        n,
        limit,
        what);
    if (n < limit) {
      return false;
    }
    ctx.stats().healthRestarts.incrementAndGet();
    LOG.error(
        "proxy for port {} is unhealthy; killing pid {} so it restarts",
        proxy.port(),
        pid.getAsLong());
    ctx.processes().signal(pid.getAsLong(), true);
    return true;
  }
}

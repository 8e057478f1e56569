package io.efscsi.node.handback;

import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.supervisor.process.ControlClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Hands one port from our proxy to the tunnel efs-utils' watchdog starts, with the kernel's mount
 * never left without a listener it can reach: our proxy lets the port go ({@code release}) and
 * keeps relaying the kernel's connection; once the watchdog's next poll has its tunnel listening,
 * our proxy relays the replies still due and ends the connection ({@code drain}); the kernel
 * reconnects to the tunnel at its next request.
 */
final class PortHandover {

  /** How one hand-over went; the times are from {@code release} (the port let go). */
  record Result(
      int port,
      boolean handed,
      String detail,
      long tunnelListeningMs,
      long drainedMs,
      Optional<Long> reconnectedMs) {}

  private static final Duration ASK = Duration.ofSeconds(5);
  private static final Duration EXIT = Duration.ofSeconds(5);

  private final Duration listenWait;
  private final Duration reconnectWait;

  /**
   * @param listenWait how long the watchdog's tunnel may take to listen after the port is let go
   * @param reconnectWait how long to watch for the kernel's new connection (an idle mount makes
   *     none until its next request)
   */
  PortHandover(Duration listenWait, Duration reconnectWait) {
    this.listenWait = listenWait;
    this.reconnectWait = reconnectWait;
  }

  Result handOver(Handed h) throws IOException, InterruptedException {
    int port = h.port();
    String socket = h.record().config().get(Keys.CONTROL_SOCKET);
    if (socket == null) {
      return new Result(port, false, "its proxy has no control socket", 0, 0, Optional.empty());
    }
    Path control = Path.of(socket);
    Set<Long> before = LoopbackSockets.served(port);
    long t0 = System.nanoTime();
    String answer = ControlClient.ask(control, "release", ASK);
    long listening;
    String how;
    if (answer.startsWith("ok released")) {
      Optional<Long> tunnel = Optional.empty();
      long until = t0 + listenWait.toNanos();
      while (tunnel.isEmpty() && System.nanoTime() < until) {
        tunnel = LoopbackSockets.listening(port);
        if (tunnel.isEmpty()) {
          Thread.sleep(10);
        }
      }
      if (tunnel.isEmpty()) {
        return new Result(
            port,
            false,
            "efs-utils' tunnel did not listen within "
                + listenWait.toSeconds()
                + " s of the port being let go; our proxy still relays the mount's connection"
                + " but takes no new one (see the Go driver's watchdog log)",
            -1,
            -1,
            Optional.empty());
      }
      listening = ms(t0);
      how = "released";
    } else if (answer.contains("unknown command")) {
      // a proxy of a release before `release`: the port is let go and the connection ended at once
      listening = -1;
      how = "drained at once (its proxy predates release; the kernel waits for the next poll)";
    } else {
      return new Result(port, false, "our proxy answered " + answer, -1, -1, Optional.empty());
    }
    String drained = ControlClient.ask(control, "drain", ASK);
    if (!drained.startsWith("ok draining")) {
      return new Result(
          port, false, "our proxy answered drain with " + drained, listening, -1, Optional.empty());
    }
    long pid = h.record().pid();
    long exitBy = System.nanoTime() + EXIT.toNanos();
    while (Files.exists(Path.of("/proc/" + pid)) && System.nanoTime() < exitBy) {
      Thread.sleep(10);
    }
    long drainedMs = ms(t0);
    Optional<Long> reconnected = Optional.empty();
    long until = System.nanoTime() + reconnectWait.toNanos();
    while (reconnected.isEmpty() && System.nanoTime() < until) {
      Set<Long> now = LoopbackSockets.served(port);
      now.removeAll(before);
      if (!now.isEmpty()) {
        reconnected = Optional.of(ms(t0));
      } else {
        Thread.sleep(10);
      }
    }
    return new Result(port, true, how, listening, drainedMs, reconnected);
  }

  private static long ms(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }
}

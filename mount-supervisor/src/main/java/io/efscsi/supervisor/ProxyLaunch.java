package io.efscsi.supervisor;

import io.efscsi.supervisor.process.ControlClient;
import io.efscsi.supervisor.process.ProxyLauncher;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The wait after a proxy's spawn: until it answers on its control socket, exits, or the start
 * timeout passes. It decides nothing about the proxy's state: {@link Supervised} turns the outcome
 * into a {@link Lifecycle} event.
 */
final class ProxyLaunch {

  /** How a start ended. */
  sealed interface Outcome {
    /** It answered on its control socket. */
    record Ready() implements Outcome {}

    /** It exited first, with this code (-1: not our child, its code unknown). */
    record Exited(int code) implements Outcome {}

    /** It neither answered nor exited within the start timeout. */
    record TimedOut() implements Outcome {}
  }

  private ProxyLaunch() {}

  /**
   * Waits for the process {@code started} (with {@code startTicks}, for a non-child's liveness) to
   * answer on {@code controlSocket}.
   */
  static Outcome await(
      ProxyContext ctx, ProxyLauncher.Started started, long startTicks, Path controlSocket) {
    long deadline = System.nanoTime() + ctx.config().startTimeout().toNanos();
    while (System.nanoTime() < deadline) {
      Optional<Integer> exit = started.child().filter(p -> !p.isAlive()).map(Process::exitValue);
      if (exit.isEmpty()
          && started.child().isEmpty()
          && !ctx.processes().alive(started.pid(), startTicks)) {
        exit = Optional.of(-1);
      }
      if (exit.isPresent()) {
        return new Outcome.Exited(exit.get());
      }
      try {
        ControlClient.ask(controlSocket, "status", ctx.config().patience().controlTimeout());
        return new Outcome.Ready();
      } catch (IOException notYet) {
        sleep(Duration.ofMillis(25));
      }
    }
    return new Outcome.TimedOut();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

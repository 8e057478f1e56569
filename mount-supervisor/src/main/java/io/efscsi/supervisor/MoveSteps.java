package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.util.Optional;

/**
 * The steps of a move that change the proxy's state, each under the proxy's lock ({@link ProxyMove}
 * takes the others, the handover, the successor's launch and its proof, outside it). Each step
 * carries the generation the move began at, and {@link Lifecycle} refuses it when the proxy exited,
 * was stopped or restarted since: the mover then undoes what it started.
 */
final class MoveSteps {

  /** What a move starts from: the running process it replaces and the generation it ran at. */
  record Start(ProxyRecord record, Placement placement, long generation) {}

  private final Supervised lock;
  private final Guarded g;
  private final ProxyProcess proc;
  private final ProxyHealth health;

  MoveSteps(Supervised lock, Guarded g, ProxyProcess proc, ProxyHealth health) {
    this.lock = lock;
    this.g = g;
    this.proc = proc;
    this.health = health;
  }

  /**
   * Marks the proxy as moving when it is running, not stopped, not crash-looping and not moving
   * already; empty (with nothing changed) otherwise.
   */
  Optional<Start> begin() {
    synchronized (lock) {
      if (g.on(new Lifecycle.Event.MoveBegin()).isEmpty()) {
        return Optional.empty();
      }
      return Optional.of(new Start(g.record(), proc.placement(), g.life().generation()));
    }
  }

  /** Whether a move is in flight (health rounds wait). */
  boolean moving() {
    synchronized (lock) {
      return g.life().moving();
    }
  }

  /**
   * Records a move's phase (the successor's group before its launch, its pid after) unless the move
   * is no longer current; false then, and the mover undoes what it started.
   */
  boolean record(long gen, ProxyRecord.Move move) {
    synchronized (lock) {
      if (g.on(new Lifecycle.Event.MoveStep(gen, false)).isEmpty()) {
        return false;
      }
      g.write(g.record().withMove(Optional.of(move)));
      return true;
    }
  }

  /**
   * Makes the successor the proxy's process ({@code retiring} names the old one, which the mover
   * drains next). Refused (false) when the proxy exited, was stopped or restarted since {@code
   * gen}: the successor is then the mover's to kill.
   */
  boolean commit(
      long gen,
      ProxyLauncher.Started successor,
      long ticks,
      Placement successorPlacement,
      String build,
      ProxyRecord.Move retiring) {
    synchronized (lock) {
      if (g.on(new Lifecycle.Event.MoveStep(gen, true)).isEmpty()) {
        return false;
      }
      long newGen = g.life().generation();
      g.write(
          g.record()
              .withProcess(successor.pid(), ticks, successorPlacement.describe())
              .withBuild(build)
              .withMove(Optional.of(retiring)));
      proc.movedIn(successor, successorPlacement);
      health.reset();
      proc.child()
          .ifPresent(p -> p.onExit().thenAccept(done -> lock.exited(newGen, done.exitValue())));
      return true;
    }
  }

  /** Ends a move (done or undone): the record carries none, health rounds resume. */
  void end() {
    synchronized (lock) {
      g.on(new Lifecycle.Event.MoveEnd());
      if (g.record().move().isPresent() && !g.life().retired()) {
        g.write(g.record().withMove(Optional.empty()));
      }
    }
  }

  /** Writes the proxy's config file from its record (after a move, the successor's socket). */
  void writeConfigFile() throws IOException {
    synchronized (lock) {
      ProxyConfig.fromMap(g.record().config()).write(lock.configFile());
    }
  }
}

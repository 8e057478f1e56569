package io.efscsi.supervisor;

import io.efscsi.supervisor.ProxyStartException.Reason;
import io.efscsi.supervisor.ProxyStatus.State;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.process.ControlClient;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One supervised proxy: its process and group, its backoff and health, and what its lock guards
 * ({@link Guarded}: its record and its {@link Lifecycle}, the state machine every change of state
 * goes through). This class carries out the actions a transition names. Its launch's wait is {@link
 * ProxyLaunch}'s, its health rounds {@link ProxyHealth}'s, a move's steps {@link ProxyMove}'s
 * (outside the lock) and {@link MoveSteps}' (under it). One lock, this object's, covers the
 * lifecycle and the record, so that a late exit, a stop and a move's commit see the same
 * generation. What it needs from the supervisor comes in its {@link ProxyContext}.
 */
final class Supervised {

  private static final Logger LOG = LoggerFactory.getLogger(Supervised.class);

  private final ProxyContext ctx;
  private final ProxyFiles files;
  private final ProxyProcess proc;
  private final Guarded g;
  private final Lifecycle life;
  private final MoveSteps moves;
  private final RestartTimer restarts;
  private final ProxyHealth health;

  Supervised(ProxyContext ctx, ProxyRecord record, Placement placement) {
    this.ctx = ctx;
    this.files = new ProxyFiles(ctx.proxiesDir(), record.id(), ctx.config().logMaxBytes());
    this.g = new Guarded(ctx, record);
    this.life = g.life();
    this.proc = new ProxyProcess(ctx, files, placement);
    this.health = new ProxyHealth(this, ctx);
    this.restarts = new RestartTimer(ctx);
    this.moves = new MoveSteps(this, g, proc, health);
  }

  synchronized ProxyRecord record() {
    return g.record();
  }

  int port() {
    return record().port();
  }

  Path configFile() {
    return files.config();
  }

  Path controlSocket() {
    return files.controlSocket();
  }

  /** {@link Guarded#on} under this object's lock (taken here for the callers outside it). */
  private synchronized Optional<List<Lifecycle.Action>> on(Lifecycle.Event e) {
    return g.on(e);
  }

  /** Up, starting, or with a restart already scheduled. */
  synchronized boolean upOrRestarting() {
    State s = life.state();
    return s == State.RUNNING || s == State.STARTING || s == State.BACKOFF;
  }

  synchronized State state() {
    return life.state();
  }

  synchronized void setUsers(Set<String> users) throws IOException {
    g.set(g.record().withUsers(users));
    ctx.owner().writeRecord(g.record());
  }

  /** Adopts a live process found in the state dir: no restart. */
  synchronized boolean adoptIfAlive() {
    ProxyRecord r = g.record();
    if (!ctx.processes().alive(r.pid(), r.startTicks())) {
      return false;
    }
    on(new Lifecycle.Event.Adopted());
    proc.adopted();
    try {
      ControlClient.ask(controlSocket(), "status", ctx.config().patience().controlTimeout());
    } catch (IOException e) {
      health.adoptedWithoutAnswer(r.pid());
      LOG.warn(
          "adopted proxy {} (pid {}) does not answer yet: {}", r.port(), r.pid(), e.getMessage());
    }
    return true;
  }

  /** Starts the process and waits until it answers on its control socket. */
  void launchAndAwait() throws ProxyStartException {
    long gen;
    ProxyLauncher.Started started;
    synchronized (this) {
      if (on(new Lifecycle.Event.Launch()).isEmpty()) {
        throw new ProxyStartException(
            Reason.UNAVAILABLE, "proxy on port " + port() + " is being stopped");
      }
      restarts.cancel();
      gen = life.generation();
      try {
        ProxyProcess.Spawned spawned = proc.spawn(g.record(), g::set);
        g.set(spawned.record());
        started = spawned.started();
      } catch (ProxyStartException e) {
        on(new Lifecycle.Event.LaunchFailed());
        throw e;
      }
      health.reset();
      g.write();
      // the launcher's one waiter thread completes a child's onExit (not the common ForkJoin pool,
      // which anything else in the process can starve); exited() is short
      proc.child().ifPresent(p -> p.onExit().thenAccept(done -> exited(gen, done.exitValue())));
    }
    switch (ProxyLaunch.await(ctx, started, record().startTicks(), controlSocket())) {
      case ProxyLaunch.Outcome.Ready r -> {
        on(new Lifecycle.Event.Ready(gen)); // refused when a stop came first: the stop wins
        LOG.info("proxy for port {} is up (pid {})", port(), started.pid());
      }
      case ProxyLaunch.Outcome.Exited x -> throw startFailure(gen, x.code());
      case ProxyLaunch.Outcome.TimedOut t -> {
        on(new Lifecycle.Event.StartTimedOut(gen));
        ctx.processes().signal(started.pid(), true);
        throw new ProxyStartException(
            Reason.FAILED,
            "proxy for port "
                + port()
                + " did not answer within "
                + ctx.config().startTimeout().toMillis()
                + " ms; "
                + files.logTail());
      }
    }
  }

  private ProxyStartException startFailure(long gen, int exit) {
    synchronized (this) {
      // the caller handles this failure (ensure forgets the proxy, restart() backs off); the
      // process's own onExit, which may run after this, is refused as an earlier process's
      if (!on(new Lifecycle.Event.StartFailed(gen)).isEmpty()) {
        proc.ended(exit, g.record().key(), g.record().port());
      }
    }
    if (exit == ProxyStartException.EXIT_BIND_FAILED) {
      ctx.stats().bindFailures.incrementAndGet();
    }
    return ProxyStartException.forExit(
        exit, port(), proc.describe(exit, record().key(), port()), files.logTail());
  }

  /** A process exit seen by its onExit (child) or the liveness poll (adopted; code -1). */
  void exited(long gen, int exitCode) {
    synchronized (this) {
      Optional<List<Lifecycle.Action>> step =
          on(new Lifecycle.Event.Exited(gen, g.record().wanted(), ctx.owner().closed()));
      // refused: a stop, a start in progress (handled by its wait), an old incarnation, or a
      // closed supervisor, whose proxies the next one adopts (and may have stopped and removed
      // by now: a last exit written here would be a file nobody removes; TakeoverIT)
      if (step.isEmpty()) {
        return;
      }
      List<Lifecycle.Action> actions = step.get();
      String why = proc.ended(exitCode, g.record().key(), g.record().port());
      LOG.warn("proxy for port {} (key {}) {}", port(), g.record().key(), why);
      if (actions.contains(Lifecycle.Action.RECONCILE)) {
        ctx.owner().reconcileSoon();
      }
      if (actions.contains(Lifecycle.Action.SCHEDULE_RESTART)) {
        scheduleRestart(why);
      }
    }
  }

  /** Under the lock, in BACKOFF: the restart after the backoff's delay. */
  private void scheduleRestart(String why) {
    long gen = life.generation();
    if (restarts.schedule(proc.startedAt(), port(), () -> restart(gen, why))
        && on(new Lifecycle.Event.CrashLoop()).isPresent()) {
      LOG.error(
          "proxy for port {} is crash-looping ({} quick exits; last: {})",
          port(),
          restarts.attempts(),
          why);
      ctx.listener().crashLooping(g.record().key(), port(), why);
    }
  }

  private void restart(long gen, String why) {
    synchronized (this) {
      if (on(new Lifecycle.Event.RestartDue(gen)).isEmpty()) {
        return;
      }
      g.set(g.record().restarted());
    }
    ctx.stats().restarts.incrementAndGet();
    ctx.listener().restarted(record().key(), port(), why, record().restarts());
    try {
      launchAndAwait();
    } catch (ProxyStartException e) {
      if (retired()) {
        LOG.info("restart of proxy for port {} given up: the proxy was stopped", port());
        return;
      }
      LOG.error("restart of proxy for port {} failed: {}", port(), e.getMessage());
      synchronized (this) {
        if (!on(new Lifecycle.Event.RetryLater(g.record().wanted())).isEmpty()) {
          scheduleRestart(e.getMessage());
        }
      }
    }
  }

  /** Restarts at once (the reconciler found its mount wanted and the proxy down). */
  void restartNow(String why) {
    long gen;
    synchronized (this) {
      if (on(new Lifecycle.Event.RestartNow()).isEmpty()) {
        return;
      }
      gen = life.generation();
    }
    ctx.owner().runRestart(() -> restart(gen, why));
  }

  /** One health round ({@link ProxyHealth}). */
  void checkHealth() {
    health.check();
  }

  /**
   * Whether the proxy is running; an adopted one found gone on the way is handled as an exit (no
   * health round for it).
   */
  synchronized boolean runningAndAlive() {
    if (life.state() != State.RUNNING) {
      return false;
    }
    if (proc.child().isEmpty()
        && !ctx.processes().alive(g.record().pid(), g.record().startTicks())) {
      exited(life.generation(), -1);
      return false;
    }
    return true;
  }

  /** The pid while running; empty otherwise. */
  synchronized OptionalLong runningPid() {
    return life.state() == State.RUNNING ? OptionalLong.of(g.record().pid()) : OptionalLong.empty();
  }

  /** Polls an adopted (non-child) process; children report their exit themselves. */
  void pollLiveness() {
    long gen;
    synchronized (this) {
      if (life.state() != State.RUNNING || proc.child().isPresent()) {
        return;
      }
      if (ctx.processes().alive(g.record().pid(), g.record().startTicks())) {
        return;
      }
      gen = life.generation();
    }
    exited(gen, -1);
  }

  /** SIGTERM, then SIGKILL after the stop timeout; the proxy stays stopped. */
  void stop() {
    long pid;
    long ticks;
    Optional<Process> ours;
    synchronized (this) {
      on(new Lifecycle.Event.Stop());
      restarts.cancel();
      pid = g.record().pid();
      ticks = g.record().startTicks();
      ours = proc.child();
    }
    boolean wasAlive = ProxyProcess.terminate(ctx, pid, ticks, ours);
    synchronized (this) {
      on(new Lifecycle.Event.Stopped());
      g.set(g.record().withProcess(0, 0, g.record().cgroup()));
    }
    if (wasAlive) {
      ctx.stats().stopped.incrementAndGet();
    }
  }

  /**
   * This object launches nothing more (its proxy is being forgotten): a scheduled restart is
   * cancelled, one in flight or a process exit seen later schedules none, and a process a restart
   * launched meanwhile is stopped as {@link #stop} stops one (a proxy that is already down costs
   * nothing). Without the stop, a takeover that timed out while the reconciler restarted the proxy
   * left that restart's process running unrecorded on the port (KernelReliabilityIT s8, slow VM).
   */
  void retire() {
    if (!retired()) {
      stop();
    }
  }

  /** Whether {@link #stop} or {@link #retire} ran: a caller waiting for it to run gives up. */
  synchronized boolean retired() {
    return life.retired();
  }

  /** The proxy's group, as last placed (or as its record names it). */
  synchronized Placement placement() {
    return proc.placement();
  }

  /** Removes the proxy's files and cgroup once it is stopped and forgotten. */
  void cleanUp() {
    placement().remove();
    files.delete();
  }

  void rotateLog() {
    files.rotateLog();
  }

  /** Whether its last health round failed: a proxy mid-heal is not moved. */
  boolean healthFailing() {
    return health.failing();
  }

  /** The steps of a move taken under this proxy's lock. */
  MoveSteps moves() {
    return moves;
  }

  ProxyFiles files() {
    return files;
  }

  /**
   * Memory of its cgroup and, when running, the counters of a {@code status} asked now (bounded by
   * {@code timeout}); never changes anything.
   */
  ProxyUsage usage(Duration timeout) {
    Placement p;
    boolean running;
    ProxyRecord r;
    synchronized (this) {
      p = proc.placement();
      running = life.state() == State.RUNNING;
      r = g.record();
    }
    return ProxyUsage.ask(r.key(), r.port(), p, running ? controlSocket() : null, timeout);
  }

  synchronized ProxyStatus status() {
    ProxyRecord r = g.record();
    State state = life.state();
    return new ProxyStatus(
        r.key(),
        r.port(),
        state == State.RUNNING || state == State.STARTING ? r.pid() : 0,
        state,
        new TreeSet<>(r.users()),
        r.restarts(),
        proc.oomKills(),
        proc.lastExit(),
        life.crashLooping(),
        health.upstreamHealthy(),
        health.targetUnreachableSince(),
        state == State.RUNNING ? Optional.ofNullable(proc.startedAt()) : Optional.empty());
  }

  /** Clears the crash-loop flag after a healthy run as long as the backoff reset. */
  synchronized void noteHealthyTime(Instant now) {
    if (life.crashLooping()
        && proc.startedAt() != null
        && Duration.between(proc.startedAt(), now).compareTo(ctx.config().backoffReset()) >= 0
        && !on(new Lifecycle.Event.Healthy()).isEmpty()) {
      LOG.info(
          "proxy for port {} has been healthy for {} s; no longer crash-looping",
          port(),
          ctx.config().backoffReset().toSeconds());
    }
  }
}

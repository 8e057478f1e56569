package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
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
 * One supervised proxy: its record, its process and group, its backoff and health, and its {@link
 * Lifecycle}, the state machine every change of state goes through ({@link #on}); this class
 * carries out the actions a transition names. Its launch is {@link ProxyLaunch}'s, its health
 * rounds {@link ProxyHealth}'s, a move's steps outside the lock {@link ProxyMove}'s. One lock (this
 * object's) covers the lifecycle and the record, so that a late exit, a stop and a move's commit
 * see the same generation. What it needs from the supervisor comes in its {@link ProxyContext}.
 */
final class Supervised {

  private static final Logger LOG = LoggerFactory.getLogger(Supervised.class);

  private final ProxyContext ctx;
  private final ProxyFiles files;
  private ProxyRecord record;
  private final ProxyProcess proc;
  private final Lifecycle life = new Lifecycle();
  private final RestartTimer restarts;
  private final ProxyHealth health;

  Supervised(ProxyContext ctx, ProxyRecord record, Placement placement) {
    this.ctx = ctx;
    this.files = new ProxyFiles(ctx.proxiesDir(), record.id(), ctx.config().logMaxBytes());
    this.record = record;
    this.proc = new ProxyProcess(ctx, files, placement);
    this.health = new ProxyHealth(this, ctx);
    this.restarts = new RestartTimer(ctx);
  }

  synchronized ProxyRecord record() {
    return record;
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

  /**
   * Puts {@code e} through the lifecycle (under this object's lock): the actions it named, or empty
   * when it was refused (nothing changed then).
   */
  private synchronized Optional<List<Lifecycle.Action>> on(Lifecycle.Event e) {
    return switch (life.on(e)) {
      case Lifecycle.Step.Moved m -> Optional.of(m.actions());
      case Lifecycle.Step.Refused r -> {
        LOG.debug("proxy for port {}: {} refused ({})", record.port(), e, r.why());
        yield Optional.empty();
      }
    };
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
    record = record.withUsers(users);
    ctx.owner().writeRecord(record);
  }

  /** Adopts a live process found in the state dir: no restart. */
  synchronized boolean adoptIfAlive() {
    if (!ctx.processes().alive(record.pid(), record.startTicks())) {
      return false;
    }
    on(new Lifecycle.Event.Adopted());
    proc.adopted();
    try {
      ControlClient.ask(controlSocket(), "status", ctx.config().patience().controlTimeout());
    } catch (IOException e) {
      health.adoptedWithoutAnswer(record.pid());
      LOG.warn(
          "adopted proxy {} (pid {}) does not answer yet: {}",
          record.port(),
          record.pid(),
          e.getMessage());
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
        ProxyProcess.Spawned spawned = proc.spawn(record, placed -> record = placed);
        record = spawned.record();
        started = spawned.started();
      } catch (ProxyStartException e) {
        on(new Lifecycle.Event.LaunchFailed());
        throw e;
      }
      health.reset();
      writeRecordOrLog();
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
                + logTail());
      }
    }
  }

  private ProxyStartException startFailure(long gen, int exit) {
    synchronized (this) {
      // the caller handles this failure (ensure forgets the proxy, restart() backs off); the
      // process's own onExit, which may run after this, is refused as an earlier process's
      if (!on(new Lifecycle.Event.StartFailed(gen)).isEmpty()) {
        proc.ended(exit, record.key(), record.port());
      }
    }
    if (exit == ProxyStartException.EXIT_BIND_FAILED) {
      ctx.stats().bindFailures.incrementAndGet();
    }
    return ProxyStartException.forExit(
        exit, port(), proc.describe(exit, record().key(), port()), logTail());
  }

  /** A process exit seen by its onExit (child) or the liveness poll (adopted; code -1). */
  void exited(long gen, int exitCode) {
    synchronized (this) {
      Optional<List<Lifecycle.Action>> step =
          on(new Lifecycle.Event.Exited(gen, record.wanted(), ctx.owner().closed()));
      // refused: a stop, a start in progress (handled by its wait), an old incarnation, or a
      // closed supervisor, whose proxies the next one adopts (and may have stopped and removed
      // by now: a last exit written here would be a file nobody removes; TakeoverIT)
      if (step.isEmpty()) {
        return;
      }
      List<Lifecycle.Action> actions = step.get();
      String why = proc.ended(exitCode, record.key(), record.port());
      LOG.warn("proxy for port {} (key {}) {}", port(), record.key(), why);
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
      ctx.listener().crashLooping(record.key(), port(), why);
    }
  }

  private void restart(long gen, String why) {
    synchronized (this) {
      if (on(new Lifecycle.Event.RestartDue(gen)).isEmpty()) {
        return;
      }
      record = record.restarted();
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
        if (!on(new Lifecycle.Event.RetryLater(record.wanted())).isEmpty()) {
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
    if (proc.child().isEmpty() && !ctx.processes().alive(record.pid(), record.startTicks())) {
      exited(life.generation(), -1);
      return false;
    }
    return true;
  }

  /** The pid while running; empty otherwise. */
  synchronized OptionalLong runningPid() {
    return life.state() == State.RUNNING ? OptionalLong.of(record.pid()) : OptionalLong.empty();
  }

  /** Polls an adopted (non-child) process; children report their exit themselves. */
  void pollLiveness() {
    long gen;
    synchronized (this) {
      if (life.state() != State.RUNNING || proc.child().isPresent()) {
        return;
      }
      if (ctx.processes().alive(record.pid(), record.startTicks())) {
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
      pid = record.pid();
      ticks = record.startTicks();
      ours = proc.child();
    }
    boolean wasAlive = ProxyProcess.terminate(ctx, pid, ticks, ours);
    synchronized (this) {
      on(new Lifecycle.Event.Stopped());
      record = record.withProcess(0, 0, record.cgroup());
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

  private String logTail() {
    return files.logTail();
  }

  /** What a move starts from: the running process it replaces and the generation it ran at. */
  record MoveStart(ProxyRecord record, Placement placement, long generation) {}

  /**
   * Marks the proxy as moving when it is running, not stopped, not crash-looping and not moving
   * already; empty (with nothing changed) otherwise.
   */
  synchronized Optional<MoveStart> beginMove() {
    if (on(new Lifecycle.Event.MoveBegin()).isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new MoveStart(record, proc.placement(), life.generation()));
  }

  /** Whether its last health round failed: a proxy mid-heal is not moved. */
  boolean healthFailing() {
    return health.failing();
  }

  /** Whether a move is in flight. */
  synchronized boolean moving() {
    return life.moving();
  }

  /**
   * Records a move's phase (the successor's group before its launch, its pid after) unless the move
   * is no longer current; false then, and the mover undoes what it started.
   */
  synchronized boolean recordMove(long gen, ProxyRecord.Move move) {
    if (on(new Lifecycle.Event.MoveStep(gen, false)).isEmpty()) {
      return false;
    }
    record = record.withMove(Optional.of(move));
    writeRecordOrLog();
    return true;
  }

  /**
   * Makes the successor the proxy's process ({@code retiring} names the old one, which the mover
   * drains next). Refused (false) when the proxy exited, was stopped or restarted since {@code
   * gen}: the successor is then the mover's to kill.
   */
  synchronized boolean commitMove(
      long gen,
      ProxyLauncher.Started successor,
      long ticks,
      Placement successorPlacement,
      String build,
      ProxyRecord.Move retiring) {
    if (on(new Lifecycle.Event.MoveStep(gen, true)).isEmpty()) {
      return false;
    }
    long newGen = life.generation();
    record =
        record
            .withProcess(successor.pid(), ticks, successorPlacement.describe())
            .withBuild(build)
            .withMove(Optional.of(retiring));
    proc.movedIn(successor, successorPlacement);
    health.reset();
    writeRecordOrLog();
    proc.child().ifPresent(p -> p.onExit().thenAccept(done -> exited(newGen, done.exitValue())));
    return true;
  }

  /** Ends a move (done or undone): the record carries none, health rounds resume. */
  synchronized void endMove() {
    on(new Lifecycle.Event.MoveEnd());
    if (record.move().isPresent() && !life.retired()) {
      record = record.withMove(Optional.empty());
      writeRecordOrLog();
    }
  }

  /** The generation now: a move compares it with the one it started at. */
  synchronized long generation() {
    return life.generation();
  }

  /** Writes the proxy's config file from its record (after a move, the successor's socket). */
  synchronized void writeConfigFile() throws IOException {
    ProxyConfig.fromMap(record.config()).write(configFile());
  }

  ProxyFiles files() {
    return files;
  }

  private void writeRecordOrLog() {
    try {
      ctx.owner().writeRecord(record);
    } catch (IOException e) {
      LOG.error("cannot write the state record of proxy {}: {}", record.id(), e.getMessage());
    }
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
      r = record;
    }
    return ProxyUsage.ask(r.key(), r.port(), p, running ? controlSocket() : null, timeout);
  }

  synchronized ProxyStatus status() {
    Set<String> users = new TreeSet<>(record.users());
    State state = life.state();
    return new ProxyStatus(
        record.key(),
        record.port(),
        state == State.RUNNING || state == State.STARTING ? record.pid() : 0,
        state,
        users,
        record.restarts(),
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

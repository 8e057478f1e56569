package io.efscsi.supervisor;

import io.efscsi.supervisor.ProxyStatus.State;
import java.util.List;

/**
 * One proxy's life as data: its {@link State}, the generation that tells its current process from
 * an earlier one, and three marks (retired, moving, crash-looping); the {@link Event}s that move
 * it; and {@link #on}, the one transition function, which either moves it and names the {@link
 * Action}s its owner ({@link Supervised}) then carries out, or refuses the event with a reason and
 * changes nothing. It does no I/O and takes no lock: its owner calls it under its own lock.
 *
 * <p>The generation grows whenever a process stops being the current one (a launch, a failed or
 * timed-out start, a stop, an adoption, a committed move, a restart asked for now), so that what a
 * process reports late (its exit, its readiness) is refused by {@link #on} once another process or
 * a stop has taken its place. Retired (by a stop) is never cleared: a stopped or forgotten proxy is
 * never launched again by this object. docs/supervisor.md prints the whole table ({@code
 * LifecycleTest} writes it).
 */
final class Lifecycle {

  /** What happens to a proxy. */
  sealed interface Event {

    /** A start is asked for: a first stage, a takeover, a restart that came due. */
    record Launch() implements Event {}

    /** The launch could not spawn a process (cgroup, config file, exec). */
    record LaunchFailed() implements Event {}

    /** The process of generation {@code gen} answered on its control socket. */
    record Ready(long gen) implements Event {}

    /** The process of {@code gen} exited before it answered. */
    record StartFailed(long gen) implements Event {}

    /** The process of {@code gen} did not answer in time (its owner kills it). */
    record StartTimedOut(long gen) implements Event {}

    /**
     * The process of {@code gen} ended while running; {@code wanted} when a user or a mount still
     * needs it, {@code ownerClosed} when its supervisor is closed (the next one adopts it).
     */
    record Exited(long gen, boolean wanted, boolean ownerClosed) implements Event {}

    /** The backoff of {@code gen}'s restart is over. */
    record RestartDue(long gen) implements Event {}

    /** A restart is wanted at once (a down proxy wanted again). */
    record RestartNow() implements Event {}

    /** A restart failed to start; {@code wanted} when a user or a mount still needs the proxy. */
    record RetryLater(boolean wanted) implements Event {}

    /** A live process was found in the state dir: adopted, not restarted. */
    record Adopted() implements Event {}

    /** Stopped for good (released, forgotten, stopAll). */
    record Stop() implements Event {}

    /** The stopped process is gone. */
    record Stopped() implements Event {}

    /** A move to another build begins (the rolling upgrade). */
    record MoveBegin() implements Event {}

    /** A move started at {@code gen} records its phase or commits its successor. */
    record MoveStep(long gen, boolean commit) implements Event {}

    /** The move is over, done or undone. */
    record MoveEnd() implements Event {}

    /** {@code attempts} quick exits in a row: crash-looping from now on. */
    record CrashLoop() implements Event {}

    /** Running long enough since its last start: no longer crash-looping. */
    record Healthy() implements Event {}
  }

  /** What the owner does after a transition. */
  enum Action {
    /** Cancels a restart waiting for its backoff. */
    CANCEL_RESTART,
    /** Places the proxy in its group and spawns its process; then waits for it to answer. */
    SPAWN,
    /** Records and logs the last exit. */
    RECORD_EXIT,
    /** Schedules a restart after the backoff. */
    SCHEDULE_RESTART,
    /** Runs the restart now, on a thread of its own (it comes back as {@link Event.RestartDue}). */
    RUN_RESTART,
    /** Counts and reports the restart, then launches ({@link Event.Launch}). */
    RESTART,
    /** Asks the reconciler for a pass soon (an exited proxy nobody wants). */
    RECONCILE,
    /** Kills the process that did not answer in time. */
    KILL,
    /** SIGTERM, then SIGKILL after the stop timeout; waits until it is reaped. */
    TERMINATE,
    /** Tells the listener the proxy is crash-looping. */
    REPORT_CRASH_LOOP
  }

  /** The result of {@link #on}: accepted with its actions, or refused with nothing changed. */
  sealed interface Step {
    record Moved(State state, List<Action> actions) implements Step {}

    record Refused(String why) implements Step {}
  }

  private State state = State.DOWN;
  private long generation;

  /**
   * Set by a stop, never cleared: a stopped or forgotten proxy is never launched again by this
   * object. Without it a restart in flight when the reconciler stopped the proxy scheduled another
   * one, and the forgotten object kept launching processes on a port a new proxy had been given
   * (two processes on one port, the live one's record overwritten and the live one killed at the
   * next adoption; KernelReliabilityIT s10 in a slow VM).
   */
  private boolean retired;

  /**
   * A move to another build is in flight ({@link ProxyMove}): health rounds leave the proxy alone,
   * and a move's step is refused once anything else (an exit, a stop) moved the generation on.
   */
  private boolean moving;

  /** Quick exits in a row: a stage waiting for it fails at once, and no move is begun. */
  private boolean crashLooping;

  State state() {
    return state;
  }

  long generation() {
    return generation;
  }

  boolean retired() {
    return retired;
  }

  boolean moving() {
    return moving;
  }

  boolean crashLooping() {
    return crashLooping;
  }

  /** Sets every field (tests, the transition table). */
  Lifecycle with(State s, long gen, boolean retired, boolean moving, boolean crashLooping) {
    this.state = s;
    this.generation = gen;
    this.retired = retired;
    this.moving = moving;
    this.crashLooping = crashLooping;
    return this;
  }

  /** The one transition function. */
  Step on(Event e) {
    return switch (e) {
      case Event.Launch l -> launch();
      case Event.LaunchFailed f ->
          state == State.STARTING ? to(State.DOWN) : refused("not starting");
      case Event.Ready r ->
          r.gen() != generation
              ? refused("an earlier process")
              : state != State.STARTING ? refused("not starting") : to(State.RUNNING);
      case Event.StartFailed f -> {
        if (f.gen() != generation) {
          yield refused("an earlier process");
        }
        generation++; // the process's own exit, seen later, is not an unexpected one
        yield to(State.DOWN, Action.RECORD_EXIT);
      }
      case Event.StartTimedOut t -> {
        if (t.gen() == generation) {
          generation++; // as for a failed start: the kill's exit is not an unexpected one
        }
        yield to(State.DOWN, Action.KILL);
      }
      case Event.Exited x -> exited(x);
      case Event.RestartDue d ->
          d.gen() != generation
              ? refused("an earlier restart")
              : state != State.BACKOFF
                  ? refused("not waiting for a restart")
                  : retired ? refused("retired") : to(State.BACKOFF, Action.RESTART);
      case Event.RestartNow n -> {
        if (state != State.DOWN || retired) {
          yield refused(retired ? "retired" : "not down");
        }
        generation++;
        yield to(State.BACKOFF, Action.RUN_RESTART);
      }
      case Event.RetryLater r ->
          state != State.DOWN || retired || !r.wanted()
              ? refused(retired ? "retired" : state != State.DOWN ? "not down" : "not wanted")
              : to(State.BACKOFF, Action.SCHEDULE_RESTART);
      case Event.Adopted a -> {
        generation++;
        yield to(State.RUNNING);
      }
      case Event.Stop s -> {
        retired = true;
        generation++;
        yield to(State.STOPPING, Action.CANCEL_RESTART, Action.TERMINATE);
      }
      case Event.Stopped s -> to(State.DOWN);
      case Event.MoveBegin b -> {
        if (state != State.RUNNING || retired || crashLooping || moving) {
          yield refused("not a running, settled proxy");
        }
        moving = true;
        yield to(state);
      }
      case Event.MoveStep m -> {
        if (m.gen() != generation || retired || state != State.RUNNING) {
          yield refused("the proxy exited, stopped or restarted since the move began");
        }
        if (m.commit()) {
          generation++;
        }
        yield to(state);
      }
      case Event.MoveEnd m -> {
        moving = false;
        yield to(state);
      }
      case Event.CrashLoop c -> {
        if (crashLooping) {
          yield refused("already crash-looping");
        }
        crashLooping = true;
        yield to(state, Action.REPORT_CRASH_LOOP);
      }
      case Event.Healthy h -> {
        if (!crashLooping || state != State.RUNNING) {
          yield refused(crashLooping ? "not running" : "not crash-looping");
        }
        crashLooping = false;
        yield to(state);
      }
    };
  }

  private Step launch() {
    if (state == State.STOPPING || retired) {
      return refused("being stopped");
    }
    generation++;
    return to(State.STARTING, Action.CANCEL_RESTART, Action.SPAWN);
  }

  private Step exited(Event.Exited x) {
    if (x.gen() != generation) {
      return refused("an earlier process");
    }
    if (state == State.STOPPING || state == State.STARTING) {
      return refused(state == State.STOPPING ? "being stopped" : "starting (its start sees it)");
    }
    if (x.ownerClosed()) {
      return refused("the supervisor is closed (the next one adopts it)");
    }
    if (!x.wanted()) {
      return to(State.DOWN, Action.RECORD_EXIT, Action.RECONCILE);
    }
    if (retired) {
      return to(State.DOWN, Action.RECORD_EXIT);
    }
    return to(State.BACKOFF, Action.RECORD_EXIT, Action.SCHEDULE_RESTART);
  }

  private Step to(State next, Action... actions) {
    state = next;
    return new Step.Moved(next, List.of(actions));
  }

  private static Step refused(String why) {
    return new Step.Refused(why);
  }
}

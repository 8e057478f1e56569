package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.Limits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Everything the supervisor is told at start-up (built from the node's flags in main; tests build
 * it directly).
 *
 * @param stateDir where records, proxy configs, control sockets and logs live
 * @param portLower first port of the proxy range
 * @param portUpper last port of the proxy range
 * @param limits each proxy's cgroup limits
 * @param reconcileInterval how often the reconciler runs on its own
 * @param mountGrace how long a watched port may lack its mount before it counts as absent
 * @param absentReads consecutive mount-table reads a mount must be missing from
 * @param healthInterval how often each proxy's control socket and upstream are checked
 * @param pingFailuresBeforeRestart consecutive failed upstream pings that restart a proxy
 * @param startTimeout how long a new proxy may take to answer on its control socket before it is
 *     killed (a proxy normally answers within a second; a JVM on a CPU-starved node or under
 *     emulation has been seen to take 20-40 s, and killing it sooner only starts another slow one)
 * @param stopTimeout how long a stopping proxy gets between SIGTERM and SIGKILL
 * @param backoffInitial first restart delay
 * @param backoffMax longest restart delay
 * @param backoffReset healthy run time after which the delay starts over
 * @param logMaxBytes size at which a proxy's log is rotated (one old file kept)
 * @param upgrades how proxies of another build are moved to this plugin's ({@link Upgrades})
 * @param patience how long health rounds wait for a proxy's answers ({@link HealthPatience})
 */
public record SupervisorConfig(
    Path stateDir,
    int portLower,
    int portUpper,
    Limits limits,
    Duration reconcileInterval,
    Duration mountGrace,
    int absentReads,
    Duration healthInterval,
    int pingFailuresBeforeRestart,
    Duration startTimeout,
    Duration stopTimeout,
    Duration backoffInitial,
    Duration backoffMax,
    Duration backoffReset,
    long logMaxBytes,
    Upgrades upgrades,
    HealthPatience patience) {

  /**
   * How long health rounds wait before they call a proxy hung.
   *
   * @param controlTimeout how long a {@code status} request may go unanswered in one round
   * @param slowLimit how long a proxy whose requests time out is left alone while its process keeps
   *     working (it uses CPU or has threads waiting for one: a node short of CPU, not a hung
   *     proxy); past it, the proxy restarts as a hung one does
   */
  public record HealthPatience(Duration controlTimeout, Duration slowLimit) {
    public HealthPatience {
      if (!controlTimeout.isPositive() || slowLimit.isNegative()) {
        throw new IllegalArgumentException(
            "health control timeout must be positive and slow limit not negative");
      }
    }

    /** The defaults: 2 s per answer, 5 min for a working proxy that answers late. */
    public static HealthPatience defaults() {
      return new HealthPatience(Duration.ofSeconds(2), Duration.ofMinutes(5));
    }
  }

  /**
   * Rolling proxy upgrades: after a plugin upgrade, proxies running another build are moved to this
   * one on their ports, one at a time.
   *
   * @param rolling false keeps every proxy on the build it runs until its volume is unstaged
   * @param delay how long after the supervisor starts the first move waits (kubelet's first calls
   *     and the takeover pass go first)
   * @param interval the pause from the end of one move to the start of the next
   */
  public record Upgrades(boolean rolling, Duration delay, Duration interval) {
    public Upgrades {
      if (delay.isNegative() || interval.isNegative()) {
        throw new IllegalArgumentException("proxy upgrade delay and interval must not be negative");
      }
    }

    /** The defaults: rolling, 60 s after start, 10 s apart. */
    public static Upgrades rollingDefaults() {
      return new Upgrades(true, Duration.ofSeconds(60), Duration.ofSeconds(10));
    }
  }

  /** Production defaults for a state dir. */
  public static SupervisorConfig defaults(Path stateDir) {
    return new SupervisorConfig(
        stateDir,
        20049,
        21049,
        new Limits(256L << 20, 64),
        Duration.ofSeconds(5),
        Duration.ofSeconds(60),
        3,
        Duration.ofSeconds(10),
        3,
        Duration.ofSeconds(60),
        Duration.ofSeconds(5),
        Duration.ofMillis(100),
        Duration.ofSeconds(30),
        Duration.ofSeconds(60),
        1L << 20,
        Upgrades.rollingDefaults(),
        HealthPatience.defaults());
  }

  /** The same settings for another state dir (the controller's cleanup mounts have their own). */
  public SupervisorConfig withStateDir(Path dir) {
    return with(b -> b.stateDir = dir);
  }

  public SupervisorConfig withPorts(int lower, int upper) {
    return with(b -> {
      b.portLower = lower;
      b.portUpper = upper;
    });
  }

  public SupervisorConfig withLimits(Limits l) {
    return with(b -> b.limits = l);
  }

  /** Each proxy's cgroup limits: memory in bytes and tasks, 0 for none. */
  public SupervisorConfig withLimits(long memoryBytes, int pids) {
    return withLimits(new Limits(memoryBytes, pids));
  }

  public SupervisorConfig withTimings(
      Duration reconcile, Duration grace, int reads, Duration health) {
    return with(b -> {
      b.reconcileInterval = reconcile;
      b.mountGrace = grace;
      b.absentReads = reads;
      b.healthInterval = health;
    });
  }

  public SupervisorConfig withStartTimeout(Duration timeout) {
    return with(b -> b.startTimeout = timeout);
  }

  /** A copy with what {@code change} sets on a {@link Copy} of these settings. */
  public SupervisorConfig with(Consumer<Copy> change) {
    Copy b = new Copy(this);
    change.accept(b);
    return b.build();
  }

  /** The settings as mutable fields, for {@link #with}: one place that lists them all. */
  public static final class Copy {
    public Path stateDir;
    public int portLower;
    public int portUpper;
    public Limits limits;
    public Duration reconcileInterval;
    public Duration mountGrace;
    public int absentReads;
    public Duration healthInterval;
    public int pingFailuresBeforeRestart;
    public Duration startTimeout;
    public Duration stopTimeout;
    public Duration backoffInitial;
    public Duration backoffMax;
    public Duration backoffReset;
    public long logMaxBytes;
    public Upgrades upgrades;
    public HealthPatience patience;

    private Copy(SupervisorConfig c) {
      stateDir = c.stateDir;
      portLower = c.portLower;
      portUpper = c.portUpper;
      limits = c.limits;
      reconcileInterval = c.reconcileInterval;
      mountGrace = c.mountGrace;
      absentReads = c.absentReads;
      healthInterval = c.healthInterval;
      pingFailuresBeforeRestart = c.pingFailuresBeforeRestart;
      startTimeout = c.startTimeout;
      stopTimeout = c.stopTimeout;
      backoffInitial = c.backoffInitial;
      backoffMax = c.backoffMax;
      backoffReset = c.backoffReset;
      logMaxBytes = c.logMaxBytes;
      upgrades = c.upgrades;
      patience = c.patience;
    }

    private SupervisorConfig build() {
      return new SupervisorConfig(
          stateDir,
          portLower,
          portUpper,
          limits,
          reconcileInterval,
          mountGrace,
          absentReads,
          healthInterval,
          pingFailuresBeforeRestart,
          startTimeout,
          stopTimeout,
          backoffInitial,
          backoffMax,
          backoffReset,
          logMaxBytes,
          upgrades,
          patience);
    }
  }
}

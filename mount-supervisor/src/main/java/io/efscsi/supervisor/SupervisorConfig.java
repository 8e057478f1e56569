package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.Limits;
import java.nio.file.Path;
import java.time.Duration;

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
 * @param startTimeout how long a new proxy may take to answer on its control socket
 * @param stopTimeout how long a stopping proxy gets between SIGTERM and SIGKILL
 * @param backoffInitial first restart delay
 * @param backoffMax longest restart delay
 * @param backoffReset healthy run time after which the delay starts over
 * @param logMaxBytes size at which a proxy's log is rotated (one old file kept)
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
    long logMaxBytes) {

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
        Duration.ofSeconds(15),
        Duration.ofSeconds(5),
        Duration.ofMillis(100),
        Duration.ofSeconds(30),
        Duration.ofSeconds(60),
        1L << 20);
  }

  /** The same settings for another state dir (the controller's cleanup mounts have their own). */
  public SupervisorConfig withStateDir(Path dir) {
    return new SupervisorConfig(
        dir,
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
        logMaxBytes);
  }

  public SupervisorConfig withPorts(int lower, int upper) {
    return new SupervisorConfig(
        stateDir,
        lower,
        upper,
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
        logMaxBytes);
  }

  public SupervisorConfig withLimits(Limits l) {
    return new SupervisorConfig(
        stateDir,
        portLower,
        portUpper,
        l,
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
        logMaxBytes);
  }

  public SupervisorConfig withTimings(
      Duration reconcile, Duration grace, int reads, Duration health) {
    return new SupervisorConfig(
        stateDir,
        portLower,
        portUpper,
        limits,
        reconcile,
        grace,
        reads,
        health,
        pingFailuresBeforeRestart,
        startTimeout,
        stopTimeout,
        backoffInitial,
        backoffMax,
        backoffReset,
        logMaxBytes);
  }
}

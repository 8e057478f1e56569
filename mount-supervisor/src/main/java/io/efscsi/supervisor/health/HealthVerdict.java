package io.efscsi.supervisor.health;

import java.util.function.BooleanSupplier;

/**
 * What one health round concludes about a proxy. A proxy is restarted only when it is the problem:
 * its control socket stopped answering, or its pings through the tunnel fail while the supervisor's
 * own probe of the same mount target succeeds. When the supervisor cannot reach the target either,
 * the network is the problem: a restart cannot fix it and would cut every kernel connection of the
 * mount, so the proxy stays up (it refuses connections and reconnects by itself when the target
 * answers again). Nor is a proxy that is only slow: when its requests went unanswered but its
 * process keeps working (it uses CPU, or its threads wait for one), the node is short of CPU, and a
 * restart would cut its connections and start a JVM on a node that has no CPU to spare.
 */
public enum HealthVerdict {
  /** Status answered and the last ping through the tunnel succeeded. */
  HEALTHY,
  /** A check failed, fewer times than its limit: count and look again next round. */
  SUSPECT,
  /** The control socket did not answer its limit of rounds running: restart the proxy. */
  RESTART_CONTROL_DEAD,
  /** The pings failed their limit of rounds while the supervisor reaches the target: restart. */
  RESTART_PROXY_BROKEN,
  /** The pings failed and so does the supervisor's own probe: leave the proxy alone. */
  TARGET_UNREACHABLE,
  /**
   * A restart is due, but the requests went unanswered (not refused) while the process kept
   * working, for less than the slow limit: a slow proxy, not a hung one; look again next round.
   */
  SLOW;

  /**
   * @param controlFailures status requests not answered, rounds running
   * @param controlLimit how many of those restart the proxy
   * @param pingFailures pings through the tunnel failed, rounds running (0 after a good one)
   * @param pingLimit how many of those make the supervisor look at the target itself
   * @param slow the last failure was an unanswered request, the process worked meanwhile, and the
   *     failures began less than the slow limit ago
   * @param targetReachable the supervisor's own probe of the proxy's mount target; asked only when
   *     the answer depends on it
   */
  public static HealthVerdict decide(
      int controlFailures,
      int controlLimit,
      int pingFailures,
      int pingLimit,
      boolean slow,
      BooleanSupplier targetReachable) {
    if (controlFailures >= controlLimit) {
      return slow ? SLOW : RESTART_CONTROL_DEAD;
    }
    if (controlFailures > 0) {
      return SUSPECT;
    }
    if (pingFailures == 0) {
      return HEALTHY;
    }
    if (pingFailures < pingLimit) {
      return SUSPECT;
    }
    if (!targetReachable.getAsBoolean()) {
      return TARGET_UNREACHABLE;
    }
    return slow ? SLOW : RESTART_PROXY_BROKEN;
  }

  /** Whether the proxy is to be killed so that it restarts on its port. */
  public boolean restarts() {
    return this == RESTART_CONTROL_DEAD || this == RESTART_PROXY_BROKEN;
  }
}

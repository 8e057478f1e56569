package io.efscsi.supervisor.health;

import java.util.function.BooleanSupplier;

/**
 * What one health round concludes about a proxy. A proxy is restarted only when it is the problem:
 * its control socket stopped answering, or its pings through the tunnel fail while the supervisor's
 * own probe of the same mount target succeeds. When the supervisor cannot reach the target either,
 * the network is the problem: a restart cannot fix it and would cut every kernel connection of the
 * mount, so the proxy stays up (it refuses connections and reconnects by itself when the target
 * answers again).
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
  TARGET_UNREACHABLE;

  /**
   * @param controlFailures status requests not answered, rounds running
   * @param controlLimit how many of those restart the proxy
   * @param pingFailures pings through the tunnel failed, rounds running (0 after a good one)
   * @param pingLimit how many of those make the supervisor look at the target itself
   * @param targetReachable the supervisor's own probe of the proxy's mount target; asked only when
   *     the answer depends on it
   */
  public static HealthVerdict decide(
      int controlFailures,
      int controlLimit,
      int pingFailures,
      int pingLimit,
      BooleanSupplier targetReachable) {
    if (controlFailures >= controlLimit) {
      return RESTART_CONTROL_DEAD;
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
    return targetReachable.getAsBoolean() ? RESTART_PROXY_BROKEN : TARGET_UNREACHABLE;
  }

  /** Whether the proxy is to be killed so that it restarts on its port. */
  public boolean restarts() {
    return this == RESTART_CONTROL_DEAD || this == RESTART_PROXY_BROKEN;
  }
}

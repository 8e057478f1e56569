package io.efscsi.supervisor;

import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * One supervised proxy, as reported to the node service, metrics and Probe details.
 *
 * @param key the mount key
 * @param port its 127.0.0.1 port
 * @param pid its pid, 0 when not running
 * @param state lifecycle state
 * @param users who wants it
 * @param restarts restarts since its record was created
 * @param oomKills OOM kills seen in its cgroup
 * @param lastExit why it last exited, if it did
 * @param crashLooping restarted repeatedly without a healthy minute in between
 * @param upstreamHealthy the last upstream ping through the tunnel succeeded
 * @param targetUnreachableSince since when the mount target has been unreachable from the node (the
 *     proxy's pings and the supervisor's own fail), if it is
 * @param upSince when the running process started
 */
public record ProxyStatus(
    String key,
    int port,
    long pid,
    State state,
    Set<String> users,
    long restarts,
    long oomKills,
    Optional<String> lastExit,
    boolean crashLooping,
    boolean upstreamHealthy,
    Optional<Instant> targetUnreachableSince,
    Optional<Instant> upSince) {

  /** Lifecycle of one proxy. */
  public enum State {
    STARTING,
    RUNNING,
    BACKOFF,
    DOWN,
    STOPPING
  }
}

package io.efscsi.supervisor.host;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether the loopback NFS mount on each watched port is present, with hysteresis: a torn read of
 * the mount table under churn can miss a line, so a mount counts as gone only after it was missing
 * from {@code absentReads} consecutive reads and was last seen more than {@code grace} ago. A
 * watched port that never had a mount counts from the moment it was watched.
 */
public final class MountPresence {

  /** What the supervisor may conclude about a port. */
  public enum State {
    /** In the last read. */
    PRESENT,
    /** Missing, but not long enough to be sure. */
    UNSURE,
    /** Missing from enough consecutive reads, for longer than the grace period. */
    ABSENT
  }

  private record Track(Instant lastSeen, int misses) {}

  private final int absentReads;
  private final Duration grace;
  private final Clock clock;
  private final Map<Integer, Track> tracks = new HashMap<>();
  private Map<Integer, List<MountInfo>> lastByPort = Map.of();

  public MountPresence(int absentReads, Duration grace, Clock clock) {
    if (absentReads < 1) {
      throw new IllegalArgumentException("absentReads must be at least 1, got " + absentReads);
    }
    this.absentReads = absentReads;
    this.grace = grace;
    this.clock = clock;
  }

  /** Starts watching a port; it has a grace period from now before it can be ABSENT. */
  public synchronized void watch(int port) {
    tracks.putIfAbsent(port, new Track(clock.instant(), 0));
  }

  /** Stops watching a port. */
  public synchronized void forget(int port) {
    tracks.remove(port);
  }

  /** Feeds one read of the mount table. */
  public synchronized void observe(List<MountInfo> table) {
    Map<Integer, List<MountInfo>> byPort = byPort(table);
    Instant now = clock.instant();
    tracks.replaceAll((port, t) ->
        byPort.containsKey(port) ? new Track(now, 0) : new Track(t.lastSeen, t.misses + 1));
    lastByPort = byPort;
  }

  /** The state of a watched port (unwatched ports are judged by the last read alone). */
  public synchronized State state(int port) {
    Track t = tracks.get(port);
    if (lastByPort.containsKey(port)) {
      return State.PRESENT;
    }
    if (t == null) {
      return State.ABSENT;
    }
    boolean longEnough = Duration.between(t.lastSeen, clock.instant()).compareTo(grace) >= 0;
    return t.misses >= absentReads && longEnough ? State.ABSENT : State.UNSURE;
  }

  /** The loopback mounts on a port in the last read (mount points, possibly several). */
  public synchronized List<MountInfo> mounts(int port) {
    return lastByPort.getOrDefault(port, List.of());
  }

  /** Every port that a loopback NFS mount carried in the last read. */
  public synchronized Set<Integer> mountedPorts() {
    return Set.copyOf(lastByPort.keySet());
  }

  /** Groups a table's loopback NFS mounts by their {@code port=} option. */
  public static Map<Integer, List<MountInfo>> byPort(List<MountInfo> table) {
    Map<Integer, List<MountInfo>> m = new HashMap<>();
    for (MountInfo mi : table) {
      mi.loopbackPort().ifPresent(p -> m.computeIfAbsent(p, k -> new ArrayList<>()).add(mi));
    }
    return m;
  }
}

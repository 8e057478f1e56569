package io.efscsi.node.stats;

import io.efscsi.supervisor.host.Commands;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Go driver's opt-in usage walk ({@code --vol-metrics-opt-in}): bytes used by a volume's tree,
 * measured by {@code du} in a child process (bounded, so a dead server hangs only the child), in
 * the background, at most {@code --vol-metrics-fs-rate-limit} walks per file system at once, each
 * result kept for {@code --vol-metrics-refresh-period}. A stats call never waits for a walk: it
 * reports the last result, or statfs figures until there is one.
 */
public final class UsageWalks {

  private static final Logger LOG = LoggerFactory.getLogger(UsageWalks.class);

  private record Result(long usedBytes, Instant at) {}

  private final Duration refresh;
  private final int perFileSystem;
  private final Duration timeout;
  private final Clock clock;
  private final Map<String, Result> results = new ConcurrentHashMap<>();
  private final Map<String, Boolean> running = new ConcurrentHashMap<>();
  private final Map<String, Semaphore> slots = new ConcurrentHashMap<>();

  public UsageWalks(Duration refresh, int perFileSystem, Duration timeout, Clock clock) {
    this.refresh = refresh;
    this.perFileSystem = perFileSystem;
    this.timeout = timeout;
    this.clock = clock;
  }

  /** The last walk's result for the volume; starts a new walk in the background when stale. */
  OptionalLong usedBytes(String volumeId, String fileSystemId, Path path) {
    Result r = results.get(volumeId);
    boolean stale = r == null || Duration.between(r.at(), clock.instant()).compareTo(refresh) >= 0;
    if (stale && running.putIfAbsent(volumeId, Boolean.TRUE) == null) {
      Semaphore slot = slots.computeIfAbsent(fileSystemId, k -> new Semaphore(perFileSystem));
      if (slot.tryAcquire()) {
        Thread.ofVirtual().name("usage-walk-" + volumeId).start(() -> walk(volumeId, path, slot));
      } else {
        running.remove(volumeId); // the file system's walks are all busy: try on a later call
      }
    }
    return r == null ? OptionalLong.empty() : OptionalLong.of(r.usedBytes());
  }

  /** Forgets a volume (unpublished or unstaged). */
  void forget(String volumeId) {
    results.remove(volumeId);
  }

  private void walk(String volumeId, Path path, Semaphore slot) {
    try {
      Commands.Result du =
          Commands.run(List.of("du", "-s", "-x", "-B1", "--", path.toString()), timeout);
      if (du.ok()) {
        long bytes = Long.parseLong(du.output().split("\\s+")[0]);
        results.put(volumeId, new Result(bytes, clock.instant()));
      } else {
        LOG.warn("usage walk of volume {} at {} failed: {}", volumeId, path, du.output());
      }
    } catch (IOException | NumberFormatException e) {
      LOG.warn("usage walk of volume {} at {} failed: {}", volumeId, path, e.getMessage());
    } finally {
      slot.release();
      running.remove(volumeId);
    }
  }
}

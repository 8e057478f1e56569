package io.efscsi.supervisor.host;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Questions about mount points answered from the mount table only: never a stat of the path, which
 * hangs when the path is a dead NFS mount.
 */
public final class MountPoints {

  private final MountTable table;

  public MountPoints(MountTable table) {
    this.table = table;
  }

  /** The topmost mount at {@code path}, if any. */
  public Optional<MountInfo> at(Path path) throws IOException {
    String p = path.normalize().toString();
    List<MountInfo> all = table.read();
    for (int i = all.size() - 1; i >= 0; i--) {
      if (all.get(i).mountPoint().equals(p)) {
        return Optional.of(all.get(i));
      }
    }
    return Optional.empty();
  }

  public boolean isMounted(Path path) throws IOException {
    return at(path).isPresent();
  }

  /** How many mounts sit at or below {@code path} (bind mounts of a staged volume included). */
  public long countAtOrBelow(Path path) throws IOException {
    String p = path.normalize().toString();
    return table.read().stream()
        .filter(m -> m.mountPoint().equals(p) || m.mountPoint().startsWith(p + "/"))
        .count();
  }

  /**
   * Waits until nothing is mounted at {@code path}; false when it is still there at the deadline.
   */
  public boolean awaitGone(Path path, Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (isMounted(path)) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }
}

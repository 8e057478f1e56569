package io.efscsi.node.stats;

import io.efscsi.common.error.DriverException;
import io.efscsi.supervisor.host.Commands;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Capacity and inodes of a mounted volume from statfs, run as {@code stat --file-system} in a child
 * process with a deadline: a dead NFS server can hang statfs, and then only the child waits.
 */
public final class VolumeStats {

  /** statfs figures in bytes and inodes. */
  public record Usage(
      long totalBytes, long availableBytes, long usedBytes, long totalInodes, long freeInodes) {}

  private final Duration timeout;

  public VolumeStats(Duration timeout) {
    this.timeout = timeout;
  }

  public Usage of(Path volumePath) throws IOException {
    Commands.Result r;
    try {
      r =
          Commands.run(
              List.of("stat", "--file-system", "--format=%S %b %f %a %c %d", volumePath.toString()),
              timeout);
    } catch (IOException e) {
      throw DriverException.unavailable(
          "statfs of %s did not answer within %d ms (is the file system reachable?)",
          volumePath, timeout.toMillis());
    }
    if (!r.ok()) {
      throw DriverException.internal("statfs of " + volumePath + " failed: " + r.output(), null);
    }
    return parse(r.output());
  }

  /** Parses {@code blocksize blocks free available inodes freeInodes}. */
  static Usage parse(String line) {
    String[] f = line.trim().split("\\s+");
    if (f.length != 6) {
      throw DriverException.internal("unexpected statfs output: " + line, null);
    }
    long bs = Long.parseLong(f[0]);
    long blocks = Long.parseLong(f[1]);
    long free = Long.parseLong(f[2]);
    long avail = Long.parseLong(f[3]);
    return new Usage(
        blocks * bs, avail * bs, (blocks - free) * bs, Long.parseLong(f[4]), Long.parseLong(f[5]));
  }
}

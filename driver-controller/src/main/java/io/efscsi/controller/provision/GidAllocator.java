package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * The GIDs in use on one file system, and the lowest free one in a range. Each distinct range gets
 * a bit set (one bit per GID, at most the access point limit wide) kept in step with the counts, so
 * an allocation is a {@code nextClearBit} scan of a few hundred words: O(n) to build once, then
 * effectively constant per allocation, instead of the Go driver's O(n²) scan per call. Not
 * thread-safe: the owning {@link FileSystemInventory} serialises access.
 */
final class GidAllocator {

  private record Range(long min, long max) {
    boolean contains(long gid) {
      return gid >= min && gid <= max;
    }
  }

  private final String fileSystemId;
  private final Map<Long, Integer> counts = new HashMap<>();
  private final Map<Range, BitSet> ranges = new HashMap<>();

  GidAllocator(String fileSystemId) {
    this.fileSystemId = fileSystemId;
  }

  /** Takes the lowest free GID in [min, max]; the caller later confirms or releases it. */
  long allocate(long min, long max) {
    Range r = new Range(min, max);
    BitSet used = ranges.computeIfAbsent(r, this::build);
    int bit = used.nextClearBit(0);
    if (bit > max - min) {
      throw DriverException.resourceExhausted(
          "Failed to locate a free GID for given file system: %s. Please create a new storage"
              + " class with a new file-system (every GID in %d-%d is in use)",
          fileSystemId, min, max);
    }
    long gid = min + bit;
    use(gid);
    return gid;
  }

  /** Counts one more access point (or reservation) with this GID. */
  void use(long gid) {
    if (gid < 0) {
      return;
    }
    if (counts.merge(gid, 1, Integer::sum) == 1) {
      ranges.forEach((r, bits) -> {
        if (r.contains(gid)) {
          bits.set((int) (gid - r.min()));
        }
      });
    }
  }

  /** Counts one fewer access point (or reservation) with this GID. */
  void release(long gid) {
    Integer left = counts.computeIfPresent(gid, (k, n) -> n == 1 ? null : n - 1);
    if (left == null) {
      ranges.forEach((r, bits) -> {
        if (r.contains(gid)) {
          bits.clear((int) (gid - r.min()));
        }
      });
    }
  }

  boolean inUse(long gid) {
    return counts.containsKey(gid);
  }

  private BitSet build(Range r) {
    BitSet bits = new BitSet((int) (r.max() - r.min() + 1));
    counts
        .keySet()
        .forEach(g -> {
          if (r.contains(g)) {
            bits.set((int) (g - r.min()));
          }
        });
    return bits;
  }
}

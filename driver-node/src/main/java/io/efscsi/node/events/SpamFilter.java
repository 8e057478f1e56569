package io.efscsi.node.events;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A token bucket per involved object, as kubelet's event spam filter: a burst of {@value #BURST}
 * events (new or aggregated), then one per {@value #REFILL_SECONDS} s. A crash-looping proxy on a
 * volume used by many pods costs the API server a bounded number of calls.
 */
final class SpamFilter {

  static final int BURST = 25;
  static final long REFILL_SECONDS = 300;
  private static final int MAX_OBJECTS = 4096;

  private final Clock clock;
  private final Map<String, double[]> buckets =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, double[]> eldest) {
          return size() > MAX_OBJECTS;
        }
      };

  SpamFilter(Clock clock) {
    this.clock = clock;
  }

  /** Takes a token of {@code object}'s bucket; false when it is empty. */
  boolean allow(String object) {
    return allow(object, clock.millis());
  }

  /** {@link #allow(String)} at {@code millis}. */
  synchronized boolean allow(String object, long millis) {
    double now = millis / 1000.0;
    double[] b = buckets.computeIfAbsent(object, o -> new double[] {BURST, now});
    b[0] = Math.min(BURST, b[0] + (now - b[1]) / REFILL_SECONDS);
    b[1] = now;
    if (b[0] < 1) {
      return false;
    }
    b[0] -= 1;
    return true;
  }
}

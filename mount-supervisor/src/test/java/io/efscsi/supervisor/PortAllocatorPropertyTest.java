package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * 10 000 random allocate / release / mount / unmount / crash / foreign-listener steps against a
 * model of the node; an allocation must never return a port that a mount, another proxy or another
 * listener holds. The supervisor's rule is modelled too: a proxy's port is released only when no
 * mount carries it (a crashed proxy keeps its port; an orphan is unmounted before release).
 */
class PortAllocatorPropertyTest {

  private static final int LOWER = 20049;
  private static final int UPPER = 20049 + 40; // small range: collisions are frequent

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 7, 42, 20049, 987654321})
  void neverHandsOutAPortThatIsInUse(long seed) {
    Random rnd = new Random(seed);
    Set<Integer> foreign = new HashSet<>(); // other listeners on the host
    Map<Integer, Boolean> proxies = new HashMap<>(); // port -> alive
    Map<Integer, Integer> mounts = new HashMap<>(); // port -> number of loopback mounts
    PortAllocator a = new PortAllocator(LOWER, UPPER, p -> !foreign.contains(p));
    int allocations = 0;
    int exhausted = 0;
    for (int step = 0; step < 10_000; step++) {
      int op = rnd.nextInt(100);
      if (op < 30) {
        int p;
        try {
          p = a.allocate(mounts.keySet());
        } catch (PortAllocator.NoFreePortException e) {
          exhausted++;
          assertNoneFree(a, foreign, proxies, mounts);
          continue;
        }
        allocations++;
        if (proxies.containsKey(p)) {
          fail("step " + step + ": port " + p + " handed out while a proxy holds it");
        }
        if (mounts.containsKey(p)) {
          fail("step " + step + ": port " + p + " handed out while a mount carries it");
        }
        if (foreign.contains(p)) {
          fail("step " + step + ": port " + p + " handed out while another listener has it");
        }
        proxies.put(p, true);
      } else if (op < 50) {
        pick(rnd, proxies.keySet()).ifPresent(p -> mounts.merge(p, 1, Integer::sum));
      } else if (op < 62) {
        pick(rnd, mounts.keySet())
            .ifPresent(p -> mounts.compute(p, (k, n) -> n == 1 ? null : n - 1));
      } else if (op < 72) {
        pick(rnd, proxies.keySet()).ifPresent(p -> proxies.put(p, false)); // crash: port kept
      } else if (op < 77) {
        pick(rnd, proxies.keySet()).ifPresent(p -> proxies.put(p, true)); // restarted, same port
      } else if (op < 90) {
        // release: only when no mount carries the port (unstage, or reconciler after umount -l)
        pick(rnd, proxies.keySet())
            .ifPresent(p -> {
              if (!proxies.get(p) && mounts.containsKey(p)) {
                mounts.remove(p); // orphan: lazily unmounted first
              }
              if (!mounts.containsKey(p)) {
                proxies.remove(p);
                a.release(p);
              }
            });
      } else if (op < 95) {
        int p = LOWER + rnd.nextInt(UPPER - LOWER + 1);
        if (!proxies.containsKey(p)) {
          foreign.add(p);
        }
      } else {
        pick(rnd, foreign).ifPresent(foreign::remove);
      }
      assertEquals(proxies.keySet(), a.held(), "step " + step + ": allocator and model disagree");
    }
    assertTrue(allocations > 500, "too few allocations to mean anything: " + allocations);
    assertTrue(exhausted > 0, "the range never ran out; the crowded case went untested");
  }

  private static void assertNoneFree(
      PortAllocator a,
      Set<Integer> foreign,
      Map<Integer, Boolean> proxies,
      Map<Integer, Integer> mounts) {
    for (int p = LOWER; p <= UPPER; p++) {
      boolean free = !proxies.containsKey(p) && !mounts.containsKey(p) && !foreign.contains(p);
      assertFalse(free, "allocator said exhausted but " + p + " is free");
    }
  }

  private static java.util.Optional<Integer> pick(Random rnd, Set<Integer> from) {
    if (from.isEmpty()) {
      return java.util.Optional.empty();
    }
    List<Integer> l = new ArrayList<>(from);
    l.sort(null);
    return java.util.Optional.of(l.get(rnd.nextInt(l.size())));
  }
}

package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EventCacheTest {

  static final EventCache.Posted P = new EventCache.Posted("ns", "e.1", 1);

  @Test
  void theLeastRecentlyPostedGoesFirstPastTheBound() {
    EventCache c = new EventCache(2, Duration.ofMinutes(10));
    c.put("a", P, 0);
    c.put("b", P, 1);
    c.put("a", P, 2); // posted again: the newest
    c.put("c", P, 3);
    assertEquals(2, c.size());
    assertEquals(Optional.empty(), c.get("b", 4));
    assertEquals(Optional.of(P), c.get("a", 4));
  }

  @Test
  void entriesNotPostedForTheTtlExpire() {
    EventCache c = new EventCache(10, Duration.ofMillis(100));
    c.put("a", P, 0);
    c.put("b", P, 50);
    assertEquals(Optional.of(P), c.get("a", 99));
    assertEquals(Optional.empty(), c.get("a", 100));
    assertEquals(1, c.size());
    assertEquals(Optional.empty(), c.get("b", 150));
    assertEquals(0, c.size());
  }
}

package io.efscsi.node.events;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The events posted lately, by aggregation key (involved object and reason), as client-go's
 * EventCorrelator keeps them: at most {@value #MAX_ENTRIES}, least recently posted dropped first,
 * and none older than {@link #TTL} since it was last posted, so that a count never targets an event
 * the API server has long dropped (it keeps them an hour).
 */
final class EventCache {

  static final int MAX_ENTRIES = 4096;
  static final Duration TTL = Duration.ofMinutes(10);

  /** An event as posted: where it is and its count. */
  record Posted(String namespace, String name, int count) {}

  private record Entry(Posted posted, long seenMillis) {}

  private final int max;
  private final long ttlMillis;

  /** In the order last posted: the eldest is the first to expire or to go. */
  private final Map<String, Entry> entries = new LinkedHashMap<>();

  EventCache() {
    this(MAX_ENTRIES, TTL);
  }

  EventCache(int max, Duration ttl) {
    this.max = max;
    this.ttlMillis = ttl.toMillis();
  }

  /** The event posted under {@code key} within the TTL before {@code nowMillis}. */
  synchronized Optional<Posted> get(String key, long nowMillis) {
    expire(nowMillis);
    Entry e = entries.get(key);
    return e == null ? Optional.empty() : Optional.of(e.posted());
  }

  /** {@code posted} was posted (created or counted again) at {@code nowMillis}. */
  synchronized void put(String key, Posted posted, long nowMillis) {
    expire(nowMillis);
    entries.remove(key);
    entries.put(key, new Entry(posted, nowMillis));
    if (entries.size() > max) {
      Iterator<String> eldest = entries.keySet().iterator();
      eldest.next();
      eldest.remove();
    }
  }

  synchronized void remove(String key) {
    entries.remove(key);
  }

  synchronized int size() {
    return entries.size();
  }

  /** Drops the entries not posted for a TTL (the eldest first; stops at the first live one). */
  private void expire(long nowMillis) {
    Iterator<Entry> it = entries.values().iterator();
    while (it.hasNext()) {
      if (nowMillis - it.next().seenMillis() < ttlMillis) {
        return;
      }
      it.remove();
    }
  }
}

package io.efscsi.node.events;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link EventApi} in memory: the events by namespace/name as the API server would hold them, and
 * the calls counted (a read of anything but the Node has no method here to count).
 */
public final class InMemoryEventApi implements EventApi {

  private final int capacity;
  private final Map<String, Event> events;
  public final AtomicInteger creates = new AtomicInteger();
  public final AtomicInteger updates = new AtomicInteger();
  public final AtomicInteger nodeReads = new AtomicInteger();
  public volatile Optional<String> nodeUid = Optional.of("node-uid-1");
  public volatile RuntimeException failure;

  public InMemoryEventApi() {
    this(Integer.MAX_VALUE);
  }

  /**
   * @param capacity the events kept, the oldest dropped first (as the API server's TTL drops them)
   */
  public InMemoryEventApi(int capacity) {
    this.capacity = capacity;
    this.events =
        new LinkedHashMap<>() {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Event> eldest) {
            return size() > InMemoryEventApi.this.capacity;
          }
        };
  }

  @Override
  public synchronized void create(Event event) {
    fail();
    creates.incrementAndGet();
    String key = key(event.getMetadata().getNamespace(), event.getMetadata().getName());
    if (events.containsKey(key)) {
      throw new IllegalStateException("409: event " + key + " already exists");
    }
    events.put(key, event);
  }

  @Override
  public synchronized boolean update(
      String namespace, String name, int count, Instant last, String message) {
    fail();
    updates.incrementAndGet();
    Event e = events.get(key(namespace, name));
    if (e == null) {
      return false;
    }
    events.put(
        key(namespace, name),
        new EventBuilder(e)
            .withCount(count)
            .withLastTimestamp(last.toString())
            .withMessage(message)
            .build());
    return true;
  }

  @Override
  public synchronized Optional<String> nodeUid(String name) {
    fail();
    nodeReads.incrementAndGet();
    return nodeUid;
  }

  /** The API server drops every event (they live an hour). */
  public synchronized void expireAll() {
    events.clear();
  }

  public synchronized List<Event> all() {
    return new ArrayList<>(events.values());
  }

  /** The events on {@code kind}, in the order created. */
  public synchronized List<Event> on(String kind) {
    return events.values().stream()
        .filter(e -> e.getInvolvedObject().getKind().equals(kind))
        .toList();
  }

  private void fail() {
    if (failure != null) {
      throw failure;
    }
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}

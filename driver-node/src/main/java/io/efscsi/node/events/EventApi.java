package io.efscsi.node.events;

import io.fabric8.kubernetes.api.model.Event;
import java.time.Instant;
import java.util.Optional;

/**
 * The Kubernetes API calls events need, and nothing else: create and patch events, and read this
 * node's Node once. Never pods or PersistentVolumes. {@link KubernetesEventApi} is the real one.
 * Failures are RuntimeExceptions (unreachable, forbidden).
 */
public interface EventApi {

  /** Creates {@code event} (its namespace and name set by the caller). */
  void create(Event event);

  /**
   * Counts an event again: its count, last time and message (one JSON merge patch); false when the
   * event is gone (the API server keeps events for an hour).
   */
  boolean update(String namespace, String name, int count, Instant last, String message);

  /** The uid of the Node {@code name}; empty when there is none or it may not be read. */
  Optional<String> nodeUid(String name);
}

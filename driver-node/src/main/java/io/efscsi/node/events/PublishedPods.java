package io.efscsi.node.events;

import io.efscsi.node.volume.PodRef;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod each target path was published for, as NodePublishVolume named it (podInfoOnMount), so
 * that an event about a target goes on its Pod without reading pods from the API server. Forgotten
 * at NodeUnpublishVolume and lost at a plugin restart. At most {@value #MAX_TARGETS} targets (a
 * node has a few hundred; the oldest published goes first when unpublish calls never come).
 */
public final class PublishedPods {

  private static final Logger LOG = LoggerFactory.getLogger(PublishedPods.class);

  public static final int MAX_TARGETS = 100_000;

  private final int max;
  private final Map<String, PodRef> byTarget = new LinkedHashMap<>();

  public PublishedPods() {
    this(MAX_TARGETS);
  }

  PublishedPods(int max) {
    this.max = max;
  }

  /**
   * Remembers the pod {@code target} is published for. A kubelet target path carries the pod's uid:
   * a reference that names another uid is not kept (events would go on the wrong pod).
   */
  public synchronized void published(String target, PodRef pod) {
    byTarget.remove(target);
    Optional<PodTarget> t = PodTarget.parse(target);
    if (t.isPresent() && !t.get().podUid().equals(pod.uid())) {
      LOG.warn(
          "NodePublishVolume named pod {}/{} with uid {} for {}, whose path names pod uid {}:"
              + " its events go on the Node",
          pod.namespace(),
          pod.name(),
          pod.uid(),
          target,
          t.get().podUid());
      return;
    }
    byTarget.put(target, pod);
    if (byTarget.size() > max) {
      Iterator<String> eldest = byTarget.keySet().iterator();
      eldest.next();
      eldest.remove();
    }
  }

  /** {@code target} is unpublished: its pod is forgotten. */
  public synchronized void unpublished(String target) {
    byTarget.remove(target);
  }

  /** The pod {@code target} was published for, if this plugin published it. */
  public synchronized Optional<PodRef> pod(String target) {
    return Optional.ofNullable(byTarget.get(target));
  }

  synchronized int size() {
    return byTarget.size();
  }
}

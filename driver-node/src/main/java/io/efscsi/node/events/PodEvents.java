package io.efscsi.node.events;

import io.efscsi.node.volume.PodRef;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes Events about the volumes of this node, without reading pods or PersistentVolumes.
 *
 * <ul>
 *   <li>An event about a target path goes on its Pod when NodePublishVolume named the pod ({@link
 *       PublishedPods}); otherwise (published before a plugin restart, a taken-over Go-driver
 *       mount) on this node's Node object, its message naming the pod uid and the PV of the path.
 *   <li>Events about a PersistentVolume or a volume handle go on the Node, naming it.
 * </ul>
 *
 * As kubelet's recorder: the same involved object and reason again (whatever the message) counts on
 * the event posted before (one PATCH: count, last time, message) while it is in the bounded {@link
 * EventCache}; and at most {@link SpamFilter}'s burst per object. Node events are told apart by
 * what they are about (the pod or volume), so that one volume's news never overwrites another's.
 * The driver works on when the API server is unreachable or forbids it: a failure is logged once at
 * WARN (then at DEBUG). An event the API server refused (4xx) is dropped; one it could not take
 * (unreachable, 5xx, 429: a control plane upgrade) waits in a bounded backlog ({@value #BACKLOG},
 * the oldest dropped first) and is posted, with the time it happened, before any newer one once the
 * API server answers: at the next event or {@link #flush}, which the plugin calls every few
 * seconds.
 */
public final class PodEvents {

  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);
  private static final int MAX_MESSAGE = 1024;

  /** The most events kept while the API server cannot take them. */
  static final int BACKLOG = 128;

  /** Where kubelet puts events on cluster-scoped objects (the Node). */
  private static final String NODE_EVENTS_NAMESPACE = "default";

  /** An event's type, as the API names them. */
  public enum Type {
    Normal,
    Warning
  }

  /**
   * The object an event goes on and what it is about.
   *
   * @param uid the object's uid; null for this node's (read once, when first needed)
   * @param subject for events on the Node: the pod or volume they are about, else empty
   */
  private record Involved(
      String eventNamespace,
      String kind,
      String namespace,
      String name,
      String uid,
      String subject) {

    /** The spam filter's object and the aggregation key's first part. */
    String key() {
      return kind + "/" + namespace + "/" + name + "/" + uid + "\u0000" + subject;
    }

    @Override
    public String toString() {
      return kind + " " + name + (subject.isEmpty() ? "" : " (" + subject + ")");
    }
  }

  private final EventApi api;
  private final PublishedPods pods;
  private final String nodeName;
  private final Clock clock;
  private final SpamFilter spam;
  private final EventCache cache = new EventCache();

  /** An event the API server could not take yet, with when it happened. */
  private record Pending(Involved on, Type type, String reason, String message, Instant at) {}

  /** What one attempt to post did. */
  private enum Sent {
    POSTED,
    DROPPED,
    LATER
  }

  /** Events waiting for the API server, oldest first; guarded by this. */
  private final java.util.ArrayDeque<Pending> backlog = new java.util.ArrayDeque<>();

  private final AtomicLong lastSuffix = new AtomicLong();
  private volatile String nodeUid;
  private volatile String lastFailure;

  /**
   * @param pods the pods NodePublishVolume named, by target path
   * @param nodeName this node (the Node events go on)
   */
  public PodEvents(EventApi api, PublishedPods pods, String nodeName, Clock clock) {
    this.api = api;
    this.pods = pods;
    this.nodeName = nodeName;
    this.clock = clock;
    this.spam = new SpamFilter(clock);
  }

  /** Whether events about {@code targetPath} go on its Pod (the pod is known). */
  public boolean knowsPodOf(String targetPath) {
    return pods.pod(targetPath).isPresent();
  }

  /**
   * Records an event about the volume mounted at {@code targetPath}: on its Pod when known, else on
   * the Node naming the pod uid and PV (or the path); false when none was recorded (spam budget
   * spent, the API refused).
   */
  public boolean record(String targetPath, Type type, String reason, String message) {
    Optional<PodRef> pod = pods.pod(targetPath);
    if (pod.isPresent()) {
      PodRef p = pod.get();
      Involved on = new Involved(p.namespace(), "Pod", p.namespace(), p.name(), p.uid(), "");
      return post(on, type, reason, message);
    }
    String subject =
        PodTarget.parse(targetPath)
            .map(t -> "pod " + t.podUid() + ", PersistentVolume " + t.volume())
            .orElse("target " + targetPath);
    return onNode(subject, type, reason, message);
  }

  /** Records an event about the PersistentVolume {@code pvName}, on the Node, naming it. */
  public boolean recordOnVolume(String pvName, Type type, String reason, String message) {
    return onNode("PersistentVolume " + pvName, type, reason, message);
  }

  /** Records an event about the volume with this CSI volume handle, on the Node, naming it. */
  public boolean recordOnVolumeHandle(String volumeId, Type type, String reason, String message) {
    return onNode("volume " + volumeId, type, reason, message);
  }

  /** Entries in the aggregation cache (tests). */
  int cached() {
    return cache.size();
  }

  private boolean onNode(String subject, Type type, String reason, String message) {
    Involved node = new Involved(NODE_EVENTS_NAMESPACE, "Node", null, nodeName, null, subject);
    // an error message that already names its volume is not prefixed twice
    String text = message.startsWith(subject + ":") ? message : subject + ": " + message;
    return post(node, type, reason, text);
  }

  /**
   * Posts an event on {@code on} (new, or the same object and reason counted again), within the
   * object's spam budget, after any event still waiting; false when none was posted now (budget
   * spent, the API refused it, or it waits in the backlog). One poster at a time, API calls
   * included: that keeps the events in the order they happened. No caller waits on it in a CSI
   * call: the plugin posts from a virtual thread or the proxy events' own sender.
   */
  private synchronized boolean post(Involved on, Type type, String reason, String message) {
    String text = message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) : message;
    if (!spam.allow(on.key())) {
      LOG.debug("event {} on {} dropped: too many events on it", reason, on);
      return false;
    }
    Pending p = new Pending(on, type, reason, text, clock.instant());
    flush();
    if (!backlog.isEmpty()) {
      keep(p);
      return false;
    }
    Sent sent = send(p);
    if (sent == Sent.LATER) {
      keep(p);
    }
    return sent == Sent.POSTED;
  }

  /**
   * Posts the events that wait for the API server, oldest first, until one still cannot be taken;
   * returns how many were posted.
   */
  public synchronized int flush() {
    int posted = 0;
    while (!backlog.isEmpty()) {
      Sent sent = send(backlog.peekFirst());
      if (sent == Sent.LATER) {
        break;
      }
      backlog.removeFirst();
      if (sent == Sent.POSTED) {
        posted++;
      }
    }
    if (posted > 0) {
      LOG.info(
          "posted {} event(s) the API server could not take earlier; {} still wait",
          posted,
          backlog.size());
      lastFailure = null;
    }
    return posted;
  }

  /** Events waiting for the API server (tests). */
  synchronized int waiting() {
    return backlog.size();
  }

  private void keep(Pending p) {
    if (backlog.size() >= BACKLOG) {
      Pending dropped = backlog.removeFirst();
      LOG.debug("event backlog full: {} on {} dropped", dropped.reason(), dropped.on());
    }
    backlog.addLast(p);
  }

  /** One attempt to post {@code p}: counted on the one posted before, or created. */
  private Sent send(Pending p) {
    Involved on = p.on();
    String key = on.key() + "\u0000" + p.reason();
    try {
      Instant now = clock.instant();
      Optional<EventCache.Posted> earlier = cache.get(key, now.toEpochMilli());
      if (earlier.isPresent()) {
        EventCache.Posted e = earlier.get();
        int count = e.count() + 1;
        if (api.update(e.namespace(), e.name(), count, p.at(), p.message())) {
          cache.put(key, new EventCache.Posted(e.namespace(), e.name(), count), now.toEpochMilli());
          return Sent.POSTED;
        }
        cache.remove(key); // gone from the API server: a new one
      }
      Event created =
          event(
              on,
              on.uid() == null ? nodeUid() : on.uid(),
              p.type(),
              p.reason(),
              p.message(),
              p.at());
      api.create(created);
      cache.put(
          key,
          new EventCache.Posted(on.eventNamespace(), created.getMetadata().getName(), 1),
          now.toEpochMilli());
      return Sent.POSTED;
    } catch (RuntimeException e) {
      boolean later = later(e);
      failed(p.reason(), on.toString(), later, e);
      return later ? Sent.LATER : Sent.DROPPED;
    }
  }

  /**
   * Whether the API server may take the event later: it was not reached, or answered 429 or 5xx (an
   * upgrade, an overload); a 4xx (forbidden, invalid) is final.
   */
  private static boolean later(RuntimeException e) {
    return e instanceof KubernetesClientException k
        && (k.getCode() <= 0 || k.getCode() == 429 || k.getCode() >= 500);
  }

  /** This node's uid, read once; the node's name when it has none to read (as kubelet does). */
  private String nodeUid() {
    String uid = nodeUid;
    if (uid == null) {
      uid = api.nodeUid(nodeName).orElse(nodeName);
      nodeUid = uid;
    }
    return uid;
  }

  private void failed(String reason, String on, boolean later, RuntimeException e) {
    String why = String.valueOf(e.getMessage());
    if (!why.equals(lastFailure)) {
      LOG.warn(
          "cannot record the event {} on {}{}: {}",
          reason,
          on,
          later ? " yet (it is posted when the API server takes it)" : "",
          why);
      lastFailure = why;
    } else {
      LOG.debug("still cannot record events: {}", why);
    }
  }

  /** A name unique in this process: the object's and a time in ns, as kubelet names events. */
  private String eventName(String object, Instant now) {
    long t = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    long suffix = lastSuffix.accumulateAndGet(t, (last, next) -> Math.max(last + 1, next));
    return object + "." + Long.toHexString(suffix);
  }

  private Event event(
      Involved o, String uid, Type type, String reason, String message, Instant now) {
    return new EventBuilder()
        .withNewMetadata()
        .withNamespace(o.eventNamespace())
        .withName(eventName(o.name(), now))
        .endMetadata()
        .withNewInvolvedObject()
        .withApiVersion("v1")
        .withKind(o.kind())
        .withNamespace(o.namespace())
        .withName(o.name())
        .withUid(uid)
        .endInvolvedObject()
        .withType(type.name())
        .withReason(reason)
        .withMessage(message)
        .withCount(1)
        .withFirstTimestamp(now.toString())
        .withLastTimestamp(now.toString())
        .withNewSource()
        .withComponent("efs-csi-node")
        .withHost(nodeName)
        .endSource()
        .withReportingComponent("efs.csi.aws.com")
        .withReportingInstance(nodeName)
        .build();
  }
}

package io.efscsi.node.events;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes Events on the pods of this node, named by a kubelet target path ({@code
 * …/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount}). The same reason and message for the same pod
 * again updates that event's count and last time, as kubelet's recorder aggregates, instead of a
 * new event; and at most {@link SpamFilter}'s burst per object, as kubelet's spam filter. Events on
 * PersistentVolumes likewise. The driver works on when the API server is unreachable or forbids it:
 * a failure is logged once at WARN (then at DEBUG) and the event is dropped.
 */
public final class PodEvents {

  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);
  private static final Pattern POD_TARGET =
      Pattern.compile(".*/pods/([^/]+)/volumes/kubernetes\\.io~csi/([^/]+)/mount");
  private static final int MAX_MESSAGE = 1024;

  /** An event's type, as the API names them. */
  public enum Type {
    Normal,
    Warning
  }

  private final Supplier<KubernetesClient> client;
  private final String nodeName;
  private final Clock clock;
  private final Map<String, Event> posted = new ConcurrentHashMap<>();
  private final SpamFilter spam;
  private volatile String lastFailure;

  /**
   * @param client the API client, made on first use
   * @param nodeName this node (the pods are looked up among the node's)
   */
  public PodEvents(Supplier<KubernetesClient> client, String nodeName, Clock clock) {
    this.client = client;
    this.nodeName = nodeName;
    this.clock = clock;
    this.spam = new SpamFilter(clock);
  }

  /** The pod uid of a kubelet target path, if it is one. */
  public static Optional<String> podUid(String targetPath) {
    Matcher m = POD_TARGET.matcher(targetPath);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /**
   * Records an event on the pod whose volume is mounted at {@code targetPath}; false when no event
   * was recorded (not a pod's path, no such pod on this node, or the API refused).
   */
  public boolean record(String targetPath, Type type, String reason, String message) {
    Optional<String> uid = podUid(targetPath);
    if (uid.isEmpty()) {
      return false;
    }
    return post(
        "pod " + uid.get(),
        type,
        reason,
        message,
        k ->
            pod(k, uid.get())
                .map(p -> {
                  ObjectMeta m = p.getMetadata();
                  return new Involved(
                      m.getNamespace(), "Pod", m.getNamespace(), m.getName(), m.getUid());
                }));
  }

  /**
   * Records an event on the PersistentVolume {@code pvName} (in namespace {@code default}, where
   * events on cluster-scoped objects go); false when none was recorded.
   */
  public boolean recordOnVolume(String pvName, Type type, String reason, String message) {
    return post("volume " + pvName, type, reason, message, k -> volume(volumeNamed(k, pvName)));
  }

  /** As {@link #recordOnVolume}, on the PersistentVolume of this CSI volume handle, if any. */
  public boolean recordOnVolumeHandle(String volumeId, Type type, String reason, String message) {
    return post(
        "volume " + volumeId, type, reason, message, k -> volume(volumeWithHandle(k, volumeId)));
  }

  /** The object an event is about, and the namespace the event goes to. */
  private record Involved(
      String eventNamespace, String kind, String namespace, String name, String uid) {}

  private static Optional<Involved> volume(Optional<PersistentVolume> pv) {
    return pv.map(v ->
        new Involved(
            "default",
            "PersistentVolume",
            null,
            v.getMetadata().getName(),
            v.getMetadata().getUid()));
  }

  /**
   * Posts an event on {@code object} (new, or the same one counted again), within the object's spam
   * budget; false when none was recorded (no such object, budget spent, the API refused).
   */
  private boolean post(
      String object,
      Type type,
      String reason,
      String message,
      java.util.function.Function<KubernetesClient, Optional<Involved>> find) {
    String key = object + "\u0000" + reason + "\u0000" + message;
    if (!spam.allow(object)) {
      LOG.debug("event {} on {} dropped: too many events on it", reason, object);
      return false;
    }
    try {
      KubernetesClient k = client.get();
      Event earlier = posted.get(key);
      if (earlier != null && again(k, key, earlier)) {
        return true;
      }
      Optional<Involved> found = find.apply(k);
      if (found.isEmpty()) {
        LOG.debug("no {} on node {}: no event ({})", object, nodeName, reason);
        return false;
      }
      posted.put(key, create(k, found.get(), type, reason, message));
      return true;
    } catch (RuntimeException e) {
      failed(reason, object, e);
      return false;
    }
  }

  private static Optional<PersistentVolume> volumeNamed(KubernetesClient k, String name) {
    return Optional.ofNullable(k.persistentVolumes().withName(name).get());
  }

  private static Optional<PersistentVolume> volumeWithHandle(KubernetesClient k, String handle) {
    return k.persistentVolumes().list().getItems().stream()
        .filter(pv -> pv.getSpec() != null && pv.getSpec().getCsi() != null)
        .filter(pv -> "efs.csi.aws.com".equals(pv.getSpec().getCsi().getDriver()))
        .filter(pv -> handle.equals(pv.getSpec().getCsi().getVolumeHandle()))
        .findFirst();
  }

  private void failed(String reason, String on, RuntimeException e) {
    String why = String.valueOf(e.getMessage());
    if (!why.equals(lastFailure)) {
      LOG.warn("cannot record the event {} on {}: {}", reason, on, why);
      lastFailure = why;
    } else {
      LOG.debug("still cannot record events: {}", why);
    }
  }

  /** The same event again: count + 1 and a new last time (one PATCH); false when it expired. */
  private boolean again(KubernetesClient k, String key, Event earlier) {
    int count = (earlier.getCount() == null ? 1 : earlier.getCount()) + 1;
    String last = clock.instant().toString();
    try {
      Event patched =
          k.v1()
              .events()
              .inNamespace(earlier.getMetadata().getNamespace())
              .withName(earlier.getMetadata().getName())
              .patch(
                  PatchContext.of(PatchType.JSON_MERGE),
                  "{\"count\":" + count + ",\"lastTimestamp\":\"" + last + "\"}");
      Event e = new EventBuilder(earlier).withCount(count).withLastTimestamp(last).build();
      posted.put(key, patched == null ? e : patched);
      return true;
    } catch (KubernetesClientException x) {
      if (x.getCode() == 404) {
        posted.remove(key);
        return false; // events live an hour: a new one
      }
      throw x;
    }
  }

  private Optional<Pod> pod(KubernetesClient k, String uid) {
    return k.pods().inAnyNamespace().withField("spec.nodeName", nodeName).list().getItems().stream()
        .filter(p -> uid.equals(p.getMetadata().getUid()))
        .findFirst();
  }

  private Event create(KubernetesClient k, Involved o, Type type, String reason, String message) {
    String ns = o.eventNamespace();
    String name = o.name();
    Instant now = clock.instant();
    Event e =
        new EventBuilder()
            .withNewMetadata()
            .withNamespace(ns)
            .withName(
                name
                    + "."
                    + Long.toHexString(now.getEpochSecond() * 1_000_000_000L + now.getNano()))
            .endMetadata()
            .withNewInvolvedObject()
            .withApiVersion("v1")
            .withKind(o.kind())
            .withNamespace(o.namespace())
            .withName(name)
            .withUid(o.uid())
            .endInvolvedObject()
            .withType(type.name())
            .withReason(reason)
            .withMessage(
                message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) : message)
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
    Event created = k.v1().events().inNamespace(ns).resource(e).create();
    return created == null ? e : created;
  }
}

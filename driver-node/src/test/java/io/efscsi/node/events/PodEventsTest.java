package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.volume.PodRef;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Where PodEvents puts events, how it counts them again, and that its cache stays bounded. */
class PodEventsTest {

  static final String NODE = "ip-10-0-0-1";
  static final String UID = "6f1c1f36-0d0e-4bb7-9a57-1c9a1b4ad9e1";
  static final String TARGET =
      "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~csi/pv-data/mount";
  static final PodRef WRITER = new PodRef("team-a", "writer-0", UID);

  final MovingClock clock = new MovingClock();
  final InMemoryEventApi api = new InMemoryEventApi();
  final PublishedPods pods = new PublishedPods();
  final PodEvents events = new PodEvents(api, pods, NODE, clock);

  static String target(String uid, String pv) {
    return "/var/lib/kubelet/pods/" + uid + "/volumes/kubernetes.io~csi/" + pv + "/mount";
  }

  @Test
  void aPublishedPodGetsTheEventWithoutAnyRead() {
    pods.published(TARGET, WRITER);
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "state is torn"));
    assertEquals(0, api.nodeReads.get(), "nothing is read for an event on a known pod");
    Event e = api.all().getFirst();
    assertEquals("team-a", e.getMetadata().getNamespace());
    assertTrue(e.getMetadata().getName().startsWith("writer-0."), e.getMetadata().getName());
    assertEquals("v1", e.getInvolvedObject().getApiVersion());
    assertEquals("Pod", e.getInvolvedObject().getKind());
    assertEquals("team-a", e.getInvolvedObject().getNamespace());
    assertEquals("writer-0", e.getInvolvedObject().getName());
    assertEquals(UID, e.getInvolvedObject().getUid());
    assertEquals("Warning", e.getType());
    assertEquals("TakeoverRefused", e.getReason());
    assertEquals("state is torn", e.getMessage());
    assertEquals(1, e.getCount());
    assertEquals("2026-11-24T05:00:00Z", e.getFirstTimestamp());
    assertEquals("efs-csi-node", e.getSource().getComponent());
    assertEquals(NODE, e.getSource().getHost());
    assertEquals("efs.csi.aws.com", e.getReportingComponent());
    assertEquals(NODE, e.getReportingInstance());
  }

  @Test
  void theSameObjectAndReasonWithAnotherMessageCountsOnOneEvent() {
    pods.published(TARGET, WRITER);
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1"));
    clock.advance(Duration.ofSeconds(30));
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 2"));
    assertEquals(1, api.all().size(), api.all().toString());
    Event e = api.all().getFirst();
    assertEquals(2, e.getCount());
    assertEquals("restart 2", e.getMessage());
    assertEquals("2026-11-24T05:00:00Z", e.getFirstTimestamp());
    assertEquals("2026-11-24T05:00:30Z", e.getLastTimestamp());
    assertEquals(List.of(1, 1), List.of(api.creates.get(), api.updates.get()));

    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "ProxyOOMKilled", "oom"));
    assertEquals(2, api.all().size(), "another reason is another event");
    assertEquals(2, events.cached(), "one cache entry per object and reason");
  }

  @Test
  void aPodRecreatedUnderItsNameIsAnotherObject() {
    pods.published(TARGET, WRITER);
    events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1");
    String uid2 = "99999999-0000-0000-0000-000000000001";
    String target2 = target(uid2, "pv-data");
    pods.published(target2, new PodRef("team-a", "writer-0", uid2));
    events.record(target2, PodEvents.Type.Warning, "ProxyRestarted", "restart 1");
    assertEquals(
        List.of(UID, uid2), api.all().stream().map(e -> e.getInvolvedObject().getUid()).toList());
  }

  @Test
  void anUnknownPodsEventGoesOnTheNodeNamingItsUidAndVolume() {
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "state is torn"));
    Event e = api.all().getFirst();
    assertEquals("default", e.getMetadata().getNamespace(), "where kubelet puts node events");
    assertEquals("Node", e.getInvolvedObject().getKind());
    assertNull(e.getInvolvedObject().getNamespace());
    assertEquals(NODE, e.getInvolvedObject().getName());
    assertEquals("node-uid-1", e.getInvolvedObject().getUid());
    assertEquals("pod " + UID + ", PersistentVolume pv-data: state is torn", e.getMessage());

    String other = target("11111111-2222-3333-4444-555555555555", "pv-logs");
    assertTrue(events.record(other, PodEvents.Type.Warning, "TakeoverRefused", "no state"));
    assertEquals(2, api.on("Node").size(), "two pods' news on the Node are two events");
    assertEquals(1, api.nodeReads.get(), "the Node is read once");

    assertTrue(events.record("/mnt/not-a-pod", PodEvents.Type.Warning, "X", "y"));
    assertEquals("target /mnt/not-a-pod: y", api.all().getLast().getMessage());
  }

  @Test
  void aNodeThatCannotBeReadIsNamedByItsNameAsKubeletDoes() {
    api.nodeUid = Optional.empty();
    assertTrue(events.recordOnVolume("pv-data", PodEvents.Type.Warning, "ProxyRestarted", "x"));
    assertEquals(NODE, api.all().getFirst().getInvolvedObject().getUid());
  }

  @Test
  void volumeAndHandleEventsGoOnTheNodeNamingThem() {
    assertTrue(
        events.recordOnVolumeHandle(
            "fs-1::fsap-2", PodEvents.Type.Warning, "StageFailed", "proxy is crash-looping"));
    assertTrue(
        events.recordOnVolume("pv-data", PodEvents.Type.Warning, "StageFailed", "not this one"));
    List<Event> onNode = api.on("Node");
    assertEquals(
        List.of(
            "volume fs-1::fsap-2: proxy is crash-looping",
            "PersistentVolume pv-data: not this one"),
        onNode.stream().map(Event::getMessage).toList());
    assertTrue(onNode.stream().allMatch(e -> e.getInvolvedObject().getName().equals(NODE)));
  }

  @Test
  void aMessageThatAlreadyNamesItsVolumeIsNotPrefixedTwice() {
    events.recordOnVolumeHandle(
        "fs-1", PodEvents.Type.Warning, "StageFailed", "volume fs-1: proxy cannot listen");
    assertEquals("volume fs-1: proxy cannot listen", api.all().getLast().getMessage());
  }

  @Test
  void anEventGoneFromTheApiServerIsCreatedAgain() {
    pods.published(TARGET, WRITER);
    events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1");
    api.expireAll();
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 2"));
    assertEquals(1, api.all().size());
    assertEquals(1, api.all().getFirst().getCount());
    assertEquals(List.of(2, 1), List.of(api.creates.get(), api.updates.get()));
  }

  @Test
  void anEntryNotSeenForTheTtlIsForgottenSoARepeatIsANewEvent() {
    pods.published(TARGET, WRITER);
    events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1");
    clock.advance(EventCache.TTL.minusSeconds(1));
    events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 2");
    assertEquals(List.of(1, 1), List.of(api.creates.get(), api.updates.get()), "seen again");
    clock.advance(EventCache.TTL);
    events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 3");
    assertEquals(List.of(2, 1), List.of(api.creates.get(), api.updates.get()), "expired: new");
  }

  @Test
  void aHundredThousandDistinctEventsKeepTheCacheBounded() {
    InMemoryEventApi server = new InMemoryEventApi(10_000);
    PodEvents bounded = new PodEvents(server, pods, NODE, clock);
    int n = 100_000;
    for (int i = 0; i < n; i++) {
      String uid = String.format("00000000-0000-0000-0000-%012d", i);
      String t = target(uid, "pv-" + i);
      if (i % 2 == 0) {
        pods.published(t, new PodRef("ns-" + (i % 7), "pod-" + i, uid)); // on the Pod
      } // else on the Node, about pod i
      assertTrue(bounded.record(t, PodEvents.Type.Warning, "Reason" + i, "message " + i));
      assertTrue(bounded.cached() <= EventCache.MAX_ENTRIES, "cache size at " + i);
      clock.advance(Duration.ofMillis(1));
    }
    assertEquals(EventCache.MAX_ENTRIES, bounded.cached());
    assertEquals(n, server.creates.get());
    assertEquals(0, server.updates.get());

    String last = target(String.format("00000000-0000-0000-0000-%012d", n - 1), "pv-" + (n - 1));
    assertTrue(bounded.record(last, PodEvents.Type.Warning, "Reason" + (n - 1), "again"));
    assertEquals(1, server.updates.get(), "the latest is still counted again");
    String first = target(String.format("00000000-0000-0000-0000-%012d", 0), "pv-0");
    assertTrue(bounded.record(first, PodEvents.Type.Warning, "Reason0", "again"));
    assertEquals(n + 1, server.creates.get(), "the eldest was dropped: a new event");

    clock.advance(EventCache.TTL);
    assertTrue(bounded.record(last, PodEvents.Type.Warning, "Other", "after the TTL"));
    assertEquals(1, bounded.cached(), "every entry not seen for the TTL is gone");
    assertTrue(bounded.record(first, PodEvents.Type.Warning, "Reason0", "later"));
    assertEquals(1, server.updates.get(), "an expired entry is never counted again");
  }

  @Test
  void noEventWhenTheApiRefusesAndNeverAnException() {
    pods.published(TARGET, WRITER);
    api.failure = new KubernetesClientException("Forbidden", 403, null);
    assertFalse(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "torn"));
    assertFalse(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "torn"));
    assertFalse(events.recordOnVolume("pv-data", PodEvents.Type.Warning, "X", "y"));
    api.failure = null;
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "torn"));
    assertEquals(1, api.all().size());
  }

  /**
   * A control plane upgrade: the API server unreachable (no HTTP status) or answering 503. The
   * events wait, in order, and are posted with the time they happened once it answers, at the next
   * event or flush; nothing is lost, nothing posted twice.
   */
  @Test
  void eventsTheApiServerCannotTakeWaitAndArePostedInOrderWhenItAnswers() {
    pods.published(TARGET, WRITER);
    api.failure = unreachable();
    assertFalse(events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1"));
    clock.advance(Duration.ofSeconds(10));
    api.failure = new KubernetesClientException("Service Unavailable", 503, null);
    assertFalse(events.recordOnVolume("pv-data", PodEvents.Type.Warning, "ProxyOOMKilled", "oom"));
    assertEquals(0, events.flush(), "nothing posted while it cannot take them");
    assertEquals(2, events.waiting());
    assertEquals(0, api.all().size());

    api.failure = null;
    clock.advance(Duration.ofSeconds(50));
    assertEquals(2, events.flush());
    assertEquals(0, events.waiting());
    List<Event> posted = api.all();
    assertEquals(
        List.of("ProxyRestarted", "ProxyOOMKilled"),
        posted.stream().map(Event::getReason).toList());
    assertEquals("2026-11-24T05:00:00Z", posted.get(0).getFirstTimestamp(), "when it happened");
    assertEquals("2026-11-24T05:00:10Z", posted.get(1).getLastTimestamp());
    assertEquals(0, events.flush(), "posted once");
    assertEquals(2, api.all().size());
  }

  @Test
  void aNewEventGoesAfterTheOnesWaitingAndTakesThemAlong() {
    pods.published(TARGET, WRITER);
    api.failure = unreachable();
    events.record(TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1");
    api.failure = null;
    clock.advance(Duration.ofSeconds(5));
    assertTrue(
        events.recordOnVolume("pv-data", PodEvents.Type.Normal, "MountTargetReachable", "up"));
    assertEquals(
        List.of("ProxyRestarted", "MountTargetReachable"),
        api.all().stream().map(Event::getReason).toList());
  }

  @Test
  void theBacklogIsBoundedAndKeepsTheNewest() {
    api.failure = unreachable();
    int n = PodEvents.BACKLOG + 40;
    for (int i = 0; i < n; i++) {
      events.recordOnVolume("pv-" + i, PodEvents.Type.Warning, "ProxyRestarted", "restart");
    }
    assertEquals(PodEvents.BACKLOG, events.waiting());
    api.failure = null;
    assertEquals(PodEvents.BACKLOG, events.flush());
    assertTrue(
        api.all().getFirst().getMessage().startsWith("PersistentVolume pv-40:"),
        api.all().getFirst().getMessage());
    assertTrue(api.all().getLast().getMessage().startsWith("PersistentVolume pv-" + (n - 1) + ":"));
  }

  @Test
  void anEventTheApiServerRefusesIsNotKept() {
    api.failure = new KubernetesClientException("Forbidden", 403, null);
    assertFalse(events.recordOnVolume("pv-data", PodEvents.Type.Warning, "X", "y"));
    assertEquals(0, events.waiting());
  }

  /** What fabric8 throws when the API server does not answer at all: no HTTP status (-1). */
  private static KubernetesClientException unreachable() {
    return new KubernetesClientException(
        "An error has occurred.", new java.net.ConnectException("Connection refused"));
  }
}

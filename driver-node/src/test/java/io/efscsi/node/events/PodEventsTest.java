package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the fabric8 mock API server: what PodEvents sends, and that it never throws. */
@EnableKubernetesMockClient
class PodEventsTest {

  static final String NODE = "ip-10-0-0-1";
  static final String UID = "6f1c1f36-0d0e-4bb7-9a57-1c9a1b4ad9e1";
  static final String TARGET =
      "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~csi/pv-data/mount";
  static final String PODS = "/api/v1/pods?fieldSelector=spec.nodeName%3D" + NODE;

  KubernetesMockServer server;
  KubernetesClient client;

  /** The bodies of the event requests, as the server received them. */
  final List<String> bodies = new java.util.concurrent.CopyOnWriteArrayList<>();

  Object echo(RecordedRequest r) {
    String body = r.getUtf8Body();
    bodies.add(body);
    return body;
  }

  static Pod pod(String namespace, String name, String uid) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withName(name)
        .withUid(uid)
        .endMetadata()
        .withNewSpec()
        .withNodeName(NODE)
        .endSpec()
        .build();
  }

  /** The node's pods: writer-0 (team-a, {@link #UID}) and another. */
  static void servePods(KubernetesMockServer server) {
    server
        .expect()
        .get()
        .withPath(PODS)
        .andReturn(
            200,
            new PodListBuilder()
                .withItems(
                    pod("team-a", "writer-0", UID),
                    pod("team-b", "other", "11111111-2222-3333-4444-555555555555"))
                .build())
        .always();
  }

  @BeforeEach
  void apiServer() {
    servePods(server);
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/team-a/events")
        .andReply(201, this::echo)
        .always();
  }

  /** The requests the mock server received since the last call, as "METHOD path". */
  List<RecordedRequest> requests() throws InterruptedException {
    List<RecordedRequest> out = new ArrayList<>();
    RecordedRequest r;
    while ((r = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
      out.add(r);
    }
    return out;
  }

  @Test
  void anEventOnThePodOfTheTargetAndARepeatAggregated() throws Exception {
    Instant t0 = Instant.parse("2026-11-24T05:00:00Z");
    PodEvents events = new PodEvents(() -> client, NODE, Clock.fixed(t0, ZoneOffset.UTC));
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "state is torn"));
    List<RecordedRequest> sent = requests();
    assertEquals(List.of("GET", "POST"), sent.stream().map(RecordedRequest::getMethod).toList());
    Event e = Serialization.unmarshal(bodies.getLast(), Event.class);
    assertEquals("Pod", e.getInvolvedObject().getKind());
    assertEquals("team-a", e.getInvolvedObject().getNamespace());
    assertEquals("writer-0", e.getInvolvedObject().getName());
    assertEquals(UID, e.getInvolvedObject().getUid());
    assertEquals("Warning", e.getType());
    assertEquals("TakeoverRefused", e.getReason());
    assertEquals("state is torn", e.getMessage());
    assertEquals(1, e.getCount());
    assertEquals("efs-csi-node", e.getSource().getComponent());
    assertEquals(NODE, e.getSource().getHost());
    assertTrue(e.getMetadata().getName().startsWith("writer-0."), e.getMetadata().getName());

    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/team-a/events/" + e.getMetadata().getName())
        .andReturn(200, e)
        .always();
    server
        .expect()
        .patch()
        .withPath("/api/v1/namespaces/team-a/events/" + e.getMetadata().getName())
        .andReply(200, this::echo)
        .always();
    assertTrue(events.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "state is torn"));
    sent = requests();
    assertEquals(
        List.of("GET", "PATCH"),
        sent.stream().map(RecordedRequest::getMethod).toList(),
        sent.stream().map(RecordedRequest::getRequestLine).toList().toString());
    assertEquals(
        "{\"count\":2,\"lastTimestamp\":\"2026-11-24T05:00:00Z\"}",
        bodies.getLast(),
        "a repeat counts on the same event");

    assertTrue(events.record(TARGET, PodEvents.Type.Normal, "MountTakenOver", "served by efs-csi"));
    assertEquals(
        List.of("GET", "POST"), requests().stream().map(RecordedRequest::getMethod).toList());
  }

  @Test
  void noEventWithoutAPodOrAnApiAndNeverAnException() throws Exception {
    PodEvents events = new PodEvents(() -> client, NODE, Clock.systemUTC());
    assertFalse(events.record("/mnt/not-a-pod", PodEvents.Type.Warning, "X", "y"));
    assertFalse(
        events.record(
            "/var/lib/kubelet/pods/99999999-0000-0000-0000-000000000000/volumes/kubernetes.io~csi/pv/mount",
            PodEvents.Type.Warning,
            "X",
            "no such pod on this node"));
    assertEquals(List.of("GET"), requests().stream().map(RecordedRequest::getMethod).toList());

    KubernetesClient unreachable =
        new KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder()
                    .withMasterUrl("https://127.0.0.1:9")
                    .withRequestRetryBackoffLimit(0)
                    .withConnectionTimeout(500)
                    .withRequestTimeout(500)
                    .build())
            .build();
    try (unreachable) {
      PodEvents offline = new PodEvents(() -> unreachable, NODE, Clock.systemUTC());
      assertFalse(offline.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "torn"));
      assertFalse(offline.record(TARGET, PodEvents.Type.Warning, "TakeoverRefused", "torn"));
    }
  }
}

package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.volume.PodRef;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fabric8 adapter against fabric8's mock API server: the only requests are events POST and
 * PATCH and one Node GET (the node's ServiceAccount may read nothing else), and never an exception
 * out of PodEvents.
 */
@EnableKubernetesMockClient
class KubernetesEventApiTest {

  static final String NODE = PodEventsTest.NODE;

  KubernetesMockServer server;
  KubernetesClient client;
  final List<String> bodies = new CopyOnWriteArrayList<>();

  Object echo(RecordedRequest r) {
    String body = r.getUtf8Body();
    bodies.add(body);
    return body;
  }

  /** The requests the mock server received since the last call, as "METHOD path". */
  List<String> requests() throws InterruptedException {
    List<String> out = new ArrayList<>();
    RecordedRequest r;
    while ((r = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
      out.add(r.getMethod() + " " + r.getPath());
    }
    return out;
  }

  @Test
  void anEventOnAPodIsOnePostAndARepeatOnePatch() throws Exception {
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/team-a/events")
        .andReply(201, this::echo)
        .always();
    PublishedPods pods = new PublishedPods();
    pods.published(PodEventsTest.TARGET, new PodRef("team-a", "writer-0", PodEventsTest.UID));
    Instant t0 = Instant.parse("2026-11-24T05:00:00Z");
    PodEvents events =
        new PodEvents(
            new KubernetesEventApi(() -> client), pods, NODE, Clock.fixed(t0, ZoneOffset.UTC));
    assertTrue(
        events.record(PodEventsTest.TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart 1"));
    assertEquals(List.of("POST /api/v1/namespaces/team-a/events"), requests());
    Event e = Serialization.unmarshal(bodies.getLast(), Event.class);
    assertEquals("writer-0", e.getInvolvedObject().getName());

    String path = "/api/v1/namespaces/team-a/events/" + e.getMetadata().getName();
    server.expect().patch().withPath(path).andReply(200, this::echo).always();
    assertTrue(
        events.record(
            PodEventsTest.TARGET, PodEvents.Type.Warning, "ProxyRestarted", "restart \"2\""));
    assertEquals(List.of("PATCH " + path), requests(), "no GET: events may not be read");
    assertEquals(
        "{\"count\":2,\"lastTimestamp\":\"2026-11-24T05:00:00Z\",\"message\":\"restart \\\"2\\\"\"}",
        bodies.getLast());
  }

  @Test
  void aPatchOfAGoneEventIsFalse() {
    KubernetesEventApi api = new KubernetesEventApi(() -> client);
    assertFalse(api.update("team-a", "writer-0.1", 2, Instant.EPOCH, "m"), "404");
  }

  @Test
  void theNodeUidIsReadAndANodeThatMayNotBeReadHasNone() {
    server
        .expect()
        .get()
        .withPath("/api/v1/nodes/" + NODE)
        .andReturn(
            200,
            new NodeBuilder().withNewMetadata().withName(NODE).withUid("n-1").endMetadata().build())
        .once();
    server.expect().get().withPath("/api/v1/nodes/" + NODE).andReturn(403, "forbidden").once();
    KubernetesEventApi api = new KubernetesEventApi(() -> client);
    assertEquals(Optional.of("n-1"), api.nodeUid(NODE));
    assertEquals(Optional.empty(), api.nodeUid(NODE), "403");
    assertEquals(Optional.empty(), api.nodeUid("other"), "404");
  }

  @Test
  void anUnreachableApiServerIsAFailureNeverAnException() {
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
      KubernetesEventApi api = new KubernetesEventApi(() -> unreachable);
      assertThrows(KubernetesClientException.class, () -> api.nodeUid(NODE));
      PodEvents offline = new PodEvents(api, new PublishedPods(), NODE, Clock.systemUTC());
      assertFalse(offline.record(PodEventsTest.TARGET, PodEvents.Type.Warning, "X", "torn"));
      assertFalse(offline.recordOnVolume("pv-data", PodEvents.Type.Warning, "X", "torn"));
    }
  }
}

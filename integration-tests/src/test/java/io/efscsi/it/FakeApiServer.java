package io.efscsi.it;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodListBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A fake Kubernetes API server (fabric8's mock) for the node plugin's events: a pod in {@code
 * team-a} per proxy port, whose target path {@link #target} carries that port, and its
 * PersistentVolume {@code pv-<port>}; the events it receives are kept.
 */
final class FakeApiServer implements AutoCloseable {

  static final String NODE = "node-it";

  private final KubernetesMockServer server = new KubernetesMockServer(false);
  final List<Event> events = new CopyOnWriteArrayList<>();

  FakeApiServer() {
    server.init();
    for (String ns : List.of("team-a", "default")) {
      server
          .expect()
          .post()
          .withPath("/api/v1/namespaces/" + ns + "/events")
          .andReply(201, this::keep)
          .always();
    }
  }

  private Object keep(RecordedRequest r) {
    String body = r.getUtf8Body();
    events.add(Serialization.unmarshal(body, Event.class));
    return body;
  }

  String url() {
    return "http://" + server.getHostName() + ":" + server.getPort();
  }

  static String uid(int port) {
    return String.format("00000000-0000-0000-0000-%012d", port);
  }

  /** The target path of the pod using the proxy on {@code port}. */
  static String target(int port) {
    return "/var/lib/kubelet/pods/"
        + uid(port)
        + "/volumes/kubernetes.io~csi/pv-"
        + port
        + "/mount";
  }

  /** Serves the node's pods and their volumes, one per port (call once, with every port). */
  void podsOn(List<Integer> ports) {
    List<Pod> pods =
        ports.stream()
            .map(p ->
                new PodBuilder()
                    .withNewMetadata()
                    .withNamespace("team-a")
                    .withName("app-" + p)
                    .withUid(uid(p))
                    .endMetadata()
                    .withNewSpec()
                    .withNodeName(NODE)
                    .endSpec()
                    .build())
            .toList();
    server
        .expect()
        .get()
        .withPath("/api/v1/pods?fieldSelector=spec.nodeName%3D" + NODE)
        .andReturn(200, new PodListBuilder().withItems(pods).build())
        .always();
    for (int p : ports) {
      server
          .expect()
          .get()
          .withPath("/api/v1/persistentvolumes/pv-" + p)
          .andReturn(
              200,
              new PersistentVolumeBuilder()
                  .withNewMetadata()
                  .withName("pv-" + p)
                  .withUid("pv-uid-" + p)
                  .endMetadata()
                  .build())
          .always();
    }
  }

  /** The reasons of the events received on the object {@code kind/name}, in order. */
  List<String> reasons(String kind, String name) {
    return events.stream()
        .filter(e -> e.getInvolvedObject().getKind().equals(kind))
        .filter(e -> e.getInvolvedObject().getName().equals(name))
        .map(Event::getReason)
        .toList();
  }

  @Override
  public void close() {
    server.destroy();
  }
}

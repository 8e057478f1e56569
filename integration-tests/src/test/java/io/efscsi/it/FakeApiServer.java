package io.efscsi.it;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A fake Kubernetes API server (fabric8's mock) for the node plugin's events: it serves the Node
 * {@link #NODE} only (the plugin reads no pods and no PersistentVolumes) and keeps the events it
 * receives. A pod per proxy port uses it, at {@link #target}; without a NodePublishVolume naming
 * it, its news goes on the Node.
 */
final class FakeApiServer implements AutoCloseable {

  static final String NODE = "node-it";
  static final String NODE_UID = "node-it-uid";

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
    server
        .expect()
        .get()
        .withPath("/api/v1/nodes/" + NODE)
        .andReturn(
            200,
            new NodeBuilder()
                .withNewMetadata()
                .withName(NODE)
                .withUid(NODE_UID)
                .endMetadata()
                .build())
        .always();
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

  /** The reasons of the events on the Node about the PersistentVolume of {@code port}, in order. */
  List<String> nodeReasons(int port) {
    return events.stream()
        .filter(e -> e.getInvolvedObject().getKind().equals("Node"))
        .filter(e -> e.getInvolvedObject().getName().equals(NODE))
        .filter(e -> e.getInvolvedObject().getUid().equals(NODE_UID))
        .filter(e -> e.getMessage().startsWith("PersistentVolume pv-" + port + ": "))
        .filter(e -> e.getMessage().contains(uid(port)))
        .map(Event::getReason)
        .toList();
  }

  @Override
  public void close() {
    server.destroy();
  }
}

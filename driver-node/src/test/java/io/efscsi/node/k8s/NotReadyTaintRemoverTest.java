package io.efscsi.node.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.k8s.NotReadyTaintRemover.Backoff;
import io.efscsi.node.k8s.NotReadyTaintRemover.Outcome;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class NotReadyTaintRemoverTest {

  static final String NODE = "ip-10-0-0-1";
  static final Taint OURS = taint(NotReadyTaintRemover.TAINT_KEY, "NoExecute");
  static final Taint OTHER = taint("example.com/maintenance", "NoSchedule");
  static final Backoff FAST = new Backoff(Duration.ofMillis(20), Duration.ofMillis(100));

  KubernetesMockServer server;
  KubernetesClient client;

  static Taint taint(String key, String effect) {
    return new TaintBuilder().withKey(key).withEffect(effect).build();
  }

  private void node(Taint... taints) {
    Node n =
        new NodeBuilder()
            .withNewMetadata()
            .withName(NODE)
            .endMetadata()
            .withNewSpec()
            .withTaints(taints)
            .endSpec()
            .build();
    client.nodes().resource(n).create();
  }

  private void csiNode(String... drivers) {
    var b = new CSINodeBuilder().withNewMetadata().withName(NODE).endMetadata().withNewSpec();
    for (String d : drivers) {
      b = b.addNewDriver().withName(d).withNodeID("i-0abc").endDriver();
    }
    client.storage().v1().csiNodes().resource(b.endSpec().build()).create();
  }

  private List<String> taintKeys() {
    Node n = client.nodes().withName(NODE).get();
    return n.getSpec().getTaints() == null
        ? List.of()
        : n.getSpec().getTaints().stream().map(Taint::getKey).toList();
  }

  /** The taints, or null while a canned 403 answers this GET instead of the remover's. */
  private List<String> taintKeysOrNull() {
    try {
      return taintKeys();
    } catch (KubernetesClientException e) {
      return null;
    }
  }

  private NotReadyTaintRemover remover() {
    return new NotReadyTaintRemover(client, NODE, FAST);
  }

  @Test
  void removedOnceTheCsiNodeListsTheDriverAndOtherTaintsAreKept() throws Exception {
    node(OTHER, OURS);
    csiNode("ebs.csi.aws.com", NotReadyTaintRemover.DRIVER);

    assertEquals(Outcome.REMOVED, remover().tryOnce());
    assertEquals(List.of("example.com/maintenance"), taintKeys());
  }

  /**
   * EFS reports no attach limit, so the kubelet registers the driver without {@code allocatable}:
   * upstream v3.5.0 waited for it and never removed the taint (kubernetes-sigs/aws-efs-csi-driver
   * #1966). The driver being listed is the gate.
   */
  @Test
  void removedThoughTheDriverHasNoAllocatableAsEfsReportsNoAttachLimit() throws Exception {
    node(OURS);
    csiNode(NotReadyTaintRemover.DRIVER);
    var listed =
        client.storage().v1().csiNodes().withName(NODE).get().getSpec().getDrivers().getFirst();
    assertNull(listed.getAllocatable(), "registered as the kubelet registers EFS");

    assertEquals(Outcome.REMOVED, remover().tryOnce());
    assertEquals(List.of(), taintKeys());
  }

  @Test
  void thePatchTestsTheTaintsAsReadAndReplacesThemWithoutOurs() throws Exception {
    node(OTHER, OURS);
    csiNode(NotReadyTaintRemover.DRIVER);
    AtomicReference<String> body = new AtomicReference<>();
    AtomicReference<String> type = new AtomicReference<>();
    server
        .expect()
        .patch()
        .withPath("/api/v1/nodes/" + NODE)
        .andReply(
            200,
            req -> {
              body.set(req.getUtf8Body());
              type.set(req.getHeader("Content-Type"));
              // Built here: calling the mock server from its own dispatcher would deadlock.
              return new NodeBuilder()
                  .withNewMetadata()
                  .withName(NODE)
                  .endMetadata()
                  .withNewSpec()
                  .withTaints(OTHER)
                  .endSpec()
                  .build();
            })
        .once();

    assertEquals(Outcome.REMOVED, remover().tryOnce());
    assertTrue(type.get().startsWith("application/json-patch+json"), type.get());
    var json = client.getKubernetesSerialization();
    String taints = json.asJson(List.of(OTHER, OURS));
    String kept = json.asJson(List.of(OTHER));
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/taints\",\"value\":"
            + taints
            + "},{\"op\":\"replace\",\"path\":\"/spec/taints\",\"value\":"
            + kept
            + "}]",
        body.get());
  }

  @Test
  void notRemovedBeforeTheKubeletRegisteredTheDriver() {
    node(OURS);
    NotReadyTaintRemover r = remover();

    assertEquals(Outcome.WAITING_FOR_CSINODE, r.tryOnce());
    csiNode("ebs.csi.aws.com");
    assertEquals(Outcome.WAITING_FOR_CSINODE, r.tryOnce());
    assertEquals(List.of(NotReadyTaintRemover.TAINT_KEY), taintKeys());
  }

  @Test
  void aNodeWithoutTheTaintIsLeftAlone() {
    node(OTHER);
    csiNode(NotReadyTaintRemover.DRIVER);
    String before = client.nodes().withName(NODE).get().getMetadata().getResourceVersion();

    assertEquals(Outcome.NO_TAINT, remover().tryOnce());
    assertEquals(before, client.nodes().withName(NODE).get().getMetadata().getResourceVersion());
    assertEquals(List.of("example.com/maintenance"), taintKeys());
  }

  @Test
  void aTaintChangedConcurrentlyFailsTheTestOpAndIsNotLost() {
    node(OURS);
    csiNode(NotReadyTaintRemover.DRIVER);
    // The apiserver rejects the patch because its test op no longer matches (another writer).
    server
        .expect()
        .patch()
        .withPath("/api/v1/nodes/" + NODE)
        .andReturn(422, "the server rejected our request: test operation failed")
        .once();
    NotReadyTaintRemover r = remover();

    assertEquals(Outcome.CONFLICT, r.tryOnce());
    assertEquals(List.of(NotReadyTaintRemover.TAINT_KEY), taintKeys());
    assertEquals(Outcome.REMOVED, r.tryOnce());
    assertEquals(List.of(), taintKeys());
  }

  @Test
  void aMissingNodeIsRetriedUntilItExists() throws Exception {
    csiNode(NotReadyTaintRemover.DRIVER);
    try (NotReadyTaintRemover r = remover()) {
      assertEquals(Outcome.NODE_MISSING, r.tryOnce());
      r.start();
      Thread.sleep(150);
      node(OURS, OTHER);
      awaitTaintKeys(List.of("example.com/maintenance"));
    }
  }

  @Test
  void forbiddenIsReportedAndRetriedLater() throws Exception {
    node(OURS);
    csiNode(NotReadyTaintRemover.DRIVER);
    server
        .expect()
        .get()
        .withPath("/api/v1/nodes/" + NODE)
        .andReturn(403, "nodes \"" + NODE + "\" is forbidden")
        .times(2);
    try (NotReadyTaintRemover r = remover()) {
      assertEquals(Outcome.FORBIDDEN, r.tryOnce());
      r.start();
      awaitTaintKeys(List.of());
    }
  }

  @Test
  void watcherRunsOnlyWithANodeNameAndNotDisabled() {
    assertEquals(
        Optional.of("n1"), NotReadyTaintRemover.nodeToWatch(Map.of("CSI_NODE_NAME", "n1")));
    assertEquals(Optional.empty(), NotReadyTaintRemover.nodeToWatch(Map.of()));
    assertEquals(
        Optional.empty(),
        NotReadyTaintRemover.nodeToWatch(
            Map.of("CSI_NODE_NAME", "n1", "DISABLE_TAINT_WATCHER", "true")));
  }

  @Test
  void backoffDoublesUpToTheMax() {
    var b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30));
    assertEquals(Duration.ofSeconds(1), b.after(0));
    assertEquals(Duration.ofSeconds(4), b.after(2));
    assertEquals(Duration.ofSeconds(30), b.after(5));
    assertEquals(Duration.ofSeconds(30), b.after(500));
  }

  private void awaitTaintKeys(List<String> expected) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!expected.equals(taintKeysOrNull()) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertEquals(expected, taintKeys());
  }
}

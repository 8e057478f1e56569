package io.efscsi.controller.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The region label of the controller's node, read through fabric8 from its mock API server. */
class NodeRegionLabelTest {

  private KubernetesMockServer server;

  @BeforeEach
  void start() {
    server = new KubernetesMockServer(false);
    server.init();
  }

  @AfterEach
  void stop() {
    server.destroy();
  }

  private void node(String name, Map<String, String> labels) {
    server
        .expect()
        .get()
        .withPath("/api/v1/nodes/" + name)
        .andReturn(
            200,
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .build())
        .always();
  }

  @Test
  void readsTheTopologyLabelThenTheDeprecatedOne() {
    node("n1", Map.of("topology.kubernetes.io/region", "eu-north-1"));
    node("n2", Map.of("failure-domain.beta.kubernetes.io/region", "ap-east-1"));
    node("n3", Map.of("kubernetes.io/os", "linux"));
    assertEquals(
        Optional.of("eu-north-1"),
        new NodeRegionLabel(server::createClient, Map.of("CSI_NODE_NAME", "n1")).region());
    assertEquals(
        Optional.of("ap-east-1"),
        new NodeRegionLabel(server::createClient, Map.of("NODE_NAME", "n2")).region());
    assertEquals(
        Optional.empty(),
        new NodeRegionLabel(server::createClient, Map.of("CSI_NODE_NAME", "n3")).region());
  }

  @Test
  void noNodeNameOrAMissingNodeGivesNothing() {
    assertEquals(Optional.empty(), new NodeRegionLabel(server::createClient, Map.of()).region());
    assertEquals(
        Optional.empty(),
        new NodeRegionLabel(server::createClient, Map.of("CSI_NODE_NAME", "gone")).region());
  }
}

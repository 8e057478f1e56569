package io.efscsi.node.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class KubernetesNodeMetadataTest {

  KubernetesMockServer server;
  KubernetesClient client;

  private void node(String providerId, Map<String, String> labels) {
    Node n =
        new NodeBuilder()
            .withNewMetadata()
            .withName("ip-10-0-0-1")
            .withLabels(labels)
            .endMetadata()
            .withNewSpec()
            .withProviderID(providerId)
            .endSpec()
            .build();
    client.nodes().resource(n).create();
  }

  private FixedNodeMetadata load() {
    return new KubernetesNodeMetadata(() -> client, "ip-10-0-0-1").load();
  }

  @Test
  void idFromProviderIdZoneAndRegionFromTopologyLabels() {
    node(
        "aws:///us-east-1a/i-0abc123def4567890",
        Map.of(
            "topology.kubernetes.io/zone", "us-east-1c",
            "topology.kubernetes.io/region", "us-east-1"));

    FixedNodeMetadata m = load();
    assertEquals("i-0abc123def4567890", m.nodeId());
    assertEquals("us-east-1", m.region());
    assertEquals(Optional.of("us-east-1c"), m.availabilityZone(), "the label wins");
  }

  @Test
  void withoutLabelsZoneComesFromProviderIdAndRegionFromTheZone() {
    node("aws:///us-gov-west-1b/i-0abc", Map.of());

    FixedNodeMetadata m = load();
    assertEquals("i-0abc", m.nodeId());
    assertEquals(Optional.of("us-gov-west-1b"), m.availabilityZone());
    assertEquals("us-gov-west-1", m.region());
  }

  @Test
  void aLocalZoneWithoutRegionLabelIsUnavailable() {
    node("aws:///us-east-1-bos-1a/i-0abc", Map.of());

    var e = assertThrows(NodeMetadataSource.Unavailable.class, this::load);
    assertEquals(
        "Node ip-10-0-0-1 has no topology.kubernetes.io/region label and no zone to derive the"
            + " region from",
        e.getMessage());
  }

  @Test
  void aHybridNodeIdIs32Characters() {
    node(
        "eks-hybrid:///us-west-2/my-cluster/0123456789abcdef0123456789abcdef",
        Map.of("topology.kubernetes.io/region", "us-west-2"));

    FixedNodeMetadata m = load();
    assertEquals("0123456789abcdef0123456789abcdef", m.nodeId());
    assertEquals(Optional.empty(), m.availabilityZone());
  }

  @Test
  void missingNodeOrProviderIdIsUnavailable() {
    var e = assertThrows(NodeMetadataSource.Unavailable.class, this::load);
    assertEquals("Node ip-10-0-0-1 does not exist", e.getMessage());

    node("", Map.of());
    e = assertThrows(NodeMetadataSource.Unavailable.class, this::load);
    assertEquals("Node ip-10-0-0-1 has no spec.providerID", e.getMessage());
  }

  @Test
  void forbiddenIsUnavailableWithTheCode() {
    server
        .expect()
        .get()
        .withPath("/api/v1/nodes/ip-10-0-0-1")
        .andReturn(403, "forbidden")
        .always();

    var e = assertThrows(NodeMetadataSource.Unavailable.class, this::load);
    assertEquals(true, e.getMessage().startsWith("cannot read Node ip-10-0-0-1 (HTTP 403): "));
  }
}

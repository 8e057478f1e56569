package io.efscsi.controller.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The region from the labels of the Node this pod runs on ({@code topology.kubernetes.io/region},
 * else the deprecated {@code failure-domain.beta.kubernetes.io/region}): the last source of the
 * region, for clusters where instance metadata is unreachable. The node is named by the {@code
 * CSI_NODE_NAME} (or {@code NODE_NAME}) environment variable, set from the downward API.
 */
public final class NodeRegionLabel {

  private static final Logger LOG = LoggerFactory.getLogger(NodeRegionLabel.class);
  static final List<String> LABELS =
      List.of("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region");

  private final Supplier<KubernetesClient> clients;
  private final Map<String, String> env;

  public NodeRegionLabel(Supplier<KubernetesClient> clients, Map<String, String> env) {
    this.clients = clients;
    this.env = env;
  }

  /** The region label of this pod's node, if the node is named and readable. */
  public Optional<String> region() {
    String node = env.getOrDefault("CSI_NODE_NAME", env.getOrDefault("NODE_NAME", "")).strip();
    if (node.isEmpty()) {
      return Optional.empty();
    }
    try (KubernetesClient k = clients.get()) {
      Node n = k.nodes().withName(node).get();
      if (n == null || n.getMetadata().getLabels() == null) {
        LOG.info("node {} not found or unlabelled; no region from node labels", node);
        return Optional.empty();
      }
      for (String label : LABELS) {
        String v = n.getMetadata().getLabels().get(label);
        if (v != null && !v.isBlank()) {
          return Optional.of(v.strip());
        }
      }
      return Optional.empty();
    } catch (KubernetesClientException e) {
      LOG.info("cannot read node {} for its region label: {}", node, e.getMessage());
      return Optional.empty();
    }
  }
}

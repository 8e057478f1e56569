package io.efscsi.node.cloud;

import io.efscsi.common.error.DriverException;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds this node's metadata the Go driver's way, never depending on IMDS alone: instance metadata,
 * then the Kubernetes Node named by {@code CSI_NODE_NAME}, then the node name itself as the id with
 * the region from {@code AWS_REGION} / {@code AWS_DEFAULT_REGION} and no zone. Each source's
 * failure is logged once with its reason.
 */
public final class NodeMetadataChain {

  private static final Logger log = LoggerFactory.getLogger(NodeMetadataChain.class);

  private final List<NodeMetadataSource> sources;
  private final Map<String, String> env;
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  NodeMetadataChain(List<NodeMetadataSource> sources, Map<String, String> env) {
    this.sources = List.copyOf(sources);
    this.env = env;
  }

  /**
   * The production chain: IMDS, then (when {@code CSI_NODE_NAME} is set) the Node through {@code
   * kubernetes}, created only if IMDS fails.
   */
  public static NodeMetadataChain standard(
      Map<String, String> env, Supplier<KubernetesClient> kubernetes) {
    List<NodeMetadataSource> sources = new ArrayList<>();
    sources.add(new ImdsNodeMetadata(env));
    String nodeName = env.getOrDefault("CSI_NODE_NAME", "").strip();
    if (!nodeName.isEmpty()) {
      sources.add(new KubernetesNodeMetadata(kubernetes, nodeName));
    }
    return new NodeMetadataChain(sources, env);
  }

  /**
   * The first source that answers, else the node name with the region from the environment.
   *
   * @throws DriverException FAILED_PRECONDITION naming every source's reason when even the last
   *     resort lacks a node name or a region
   */
  public NodeMetadata resolve() {
    List<String> reasons = new ArrayList<>();
    for (NodeMetadataSource s : sources) {
      try {
        FixedNodeMetadata m = s.load();
        log.info(
            "node metadata from {}: node id {}, region {}, zone {}",
            m.source(),
            m.nodeId(),
            m.region(),
            m.availabilityZone().orElse("unknown"));
        return m;
      } catch (NodeMetadataSource.Unavailable e) {
        String reason = s.name() + ": " + e.getMessage();
        reasons.add(reason);
        if (logged.add(reason)) {
          log.warn("node metadata not available from {}", reason);
        }
      }
    }
    return fromEnvironment(reasons);
  }

  private NodeMetadata fromEnvironment(List<String> reasons) {
    Optional<String> node = env("CSI_NODE_NAME");
    Optional<String> region = env("AWS_REGION").or(() -> env("AWS_DEFAULT_REGION"));
    if (node.isEmpty() || region.isEmpty()) {
      throw DriverException.failedPrecondition(
          "cannot determine this node's metadata: %s; last resort needs CSI_NODE_NAME and"
              + " AWS_REGION (or AWS_DEFAULT_REGION), got CSI_NODE_NAME=%s AWS_REGION=%s",
          String.join("; ", reasons), node.orElse(""), region.orElse(""));
    }
    FixedNodeMetadata m =
        new FixedNodeMetadata(node.get(), region.get(), Optional.empty(), "node name and env");
    if (logged.add("fallback")) {
      log.warn(
          "node metadata from CSI_NODE_NAME and the environment: node id {}, region {}, zone"
              + " unknown (no topology)",
          m.nodeId(),
          m.region());
    }
    return m;
  }

  private Optional<String> env(String name) {
    return Optional.ofNullable(env.get(name)).map(String::strip).filter(v -> !v.isEmpty());
  }
}

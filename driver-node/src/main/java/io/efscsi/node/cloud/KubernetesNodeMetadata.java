package io.efscsi.node.cloud;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Node metadata from this node's Kubernetes Node object (the Go driver's fallback when IMDS is not
 * reachable): the id from {@code spec.providerID} ({@code aws:///us-east-1a/i-0abc…}: the instance
 * id, or a 32-character id on other providers), the zone from the {@code
 * topology.kubernetes.io/zone} label (else the providerID's zone), the region from the {@code
 * topology.kubernetes.io/region} label (else derived from a regular zone name).
 */
final class KubernetesNodeMetadata implements NodeMetadataSource {

  static final String ZONE_LABEL = "topology.kubernetes.io/zone";
  static final String REGION_LABEL = "topology.kubernetes.io/region";

  /** The Go driver's pattern: {@code i-[a-z0-9]+$|[a-z0-9]{32}}. */
  private static final Pattern ID = Pattern.compile("i-[a-z0-9]+$|[a-z0-9]{32}");

  /** {@code aws:///<zone>/<id>}. */
  private static final Pattern AWS_PROVIDER_ID = Pattern.compile("^aws:///([^/]+)/[^/]+$");

  /** A regular zone: region plus one letter ({@code us-east-1a}, {@code us-gov-west-1b}). */
  private static final Pattern REGULAR_ZONE = Pattern.compile("^([a-z]{2}(?:-[a-z]+)+-\\d+)[a-z]$");

  private final Supplier<KubernetesClient> client;
  private final String nodeName;

  /** {@code client}: built when first asked (the chain may never get here). */
  KubernetesNodeMetadata(Supplier<KubernetesClient> client, String nodeName) {
    this.client = client;
    this.nodeName = nodeName;
  }

  @Override
  public String name() {
    return "Kubernetes Node " + nodeName;
  }

  @Override
  public FixedNodeMetadata load() {
    KubernetesClient c;
    try {
      c = client.get();
    } catch (RuntimeException e) {
      throw new Unavailable("cannot build the Kubernetes client: " + e.getMessage(), e);
    }
    Node node;
    try {
      node = c.nodes().withName(nodeName).get();
    } catch (KubernetesClientException e) {
      throw new Unavailable(
          "cannot read Node " + nodeName + " (HTTP " + e.getCode() + "): " + e.getMessage(), e);
    }
    if (node == null) {
      throw new Unavailable("Node " + nodeName + " does not exist");
    }
    String providerId = node.getSpec() == null ? null : node.getSpec().getProviderID();
    if (providerId == null || providerId.isBlank()) {
      throw new Unavailable("Node " + nodeName + " has no spec.providerID");
    }
    Matcher id = ID.matcher(providerId);
    if (!id.find()) {
      throw new Unavailable(
          "Node " + nodeName + " has providerID " + providerId + " without an instance id");
    }
    Map<String, String> labels =
        node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    Optional<String> zone = label(labels, ZONE_LABEL).or(() -> providerZone(providerId));
    String region =
        label(labels, REGION_LABEL)
            .or(() -> zone.flatMap(KubernetesNodeMetadata::regionOfZone))
            .orElseThrow(() ->
                new Unavailable(
                    "Node "
                        + nodeName
                        + " has no "
                        + REGION_LABEL
                        + " label and no zone to"
                        + " derive the region from"));
    return new FixedNodeMetadata(id.group(), region, zone, name());
  }

  private static Optional<String> label(Map<String, String> labels, String key) {
    return Optional.ofNullable(labels.get(key)).map(String::strip).filter(v -> !v.isEmpty());
  }

  private static Optional<String> providerZone(String providerId) {
    Matcher m = AWS_PROVIDER_ID.matcher(providerId);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }

  static Optional<String> regionOfZone(String zone) {
    Matcher m = REGULAR_ZONE.matcher(zone);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }
}

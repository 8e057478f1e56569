package io.efscsi.node.cloud;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.imds.Ec2MetadataClient;
import software.amazon.awssdk.imds.Ec2MetadataRetryPolicy;

/**
 * Node metadata from EC2 instance metadata (IMDSv2, through the SDK's {@link Ec2MetadataClient}):
 * {@code instance-id}, {@code placement/region}, {@code placement/availability-zone}. Short
 * timeouts and no retries, so a node without IMDS (or with a hop limit of 1) only waits a moment.
 *
 * <p>Honours {@code AWS_EC2_METADATA_DISABLED=true} (not asked at all) and {@code
 * AWS_EC2_METADATA_SERVICE_ENDPOINT}. Like the Go driver, SageMaker HyperPod nodes (node name
 * {@code hyperpod-…}) skip IMDS: it describes the host, not the node.
 */
final class ImdsNodeMetadata implements NodeMetadataSource {

  static final Duration TIMEOUT = Duration.ofSeconds(1);

  private final Map<String, String> env;

  /** {@code env}: the process environment ({@code System.getenv()}), or a map in tests. */
  ImdsNodeMetadata(Map<String, String> env) {
    this.env = env;
  }

  @Override
  public String name() {
    return "instance metadata";
  }

  @Override
  public FixedNodeMetadata load() {
    if ("true".equalsIgnoreCase(env.getOrDefault("AWS_EC2_METADATA_DISABLED", "").strip())) {
      throw new Unavailable("disabled by AWS_EC2_METADATA_DISABLED=true");
    }
    if (env.getOrDefault("CSI_NODE_NAME", "").startsWith("hyperpod-")) {
      throw new Unavailable(
          "skipped on a SageMaker HyperPod node (" + env.get("CSI_NODE_NAME") + ")");
    }
    try (Ec2MetadataClient client = client()) {
      String id = get(client, "instance-id");
      String region = get(client, "placement/region");
      String az = get(client, "placement/availability-zone");
      return new FixedNodeMetadata(id, region, Optional.of(az), name());
    }
  }

  private Ec2MetadataClient client() {
    Ec2MetadataClient.Builder b =
        Ec2MetadataClient.builder()
            .retryPolicy(Ec2MetadataRetryPolicy.none())
            .tokenTtl(Duration.ofMinutes(5))
            .httpClient(
                UrlConnectionHttpClient.builder()
                    .connectionTimeout(TIMEOUT)
                    .socketTimeout(TIMEOUT));
    String endpoint = env.getOrDefault("AWS_EC2_METADATA_SERVICE_ENDPOINT", "").strip();
    if (!endpoint.isEmpty()) {
      b.endpoint(URI.create(endpoint));
    }
    return b.build();
  }

  private static String get(Ec2MetadataClient client, String item) {
    String path = "/latest/meta-data/" + item;
    String value;
    try {
      value = client.get(path).asString().strip();
    } catch (SdkException | IllegalArgumentException e) {
      throw new Unavailable("GET " + path + ": " + e.getMessage(), e);
    }
    if (value.isEmpty()) {
      throw new Unavailable("GET " + path + " answered an empty value");
    }
    return value;
  }
}

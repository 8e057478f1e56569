package io.efscsi.controller;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.imds.Ec2MetadataClient;
import software.amazon.awssdk.imds.Ec2MetadataRetryPolicy;

/**
 * Finds the AWS region: the {@code --region} flag, then {@code AWS_REGION} and {@code
 * AWS_DEFAULT_REGION}, then instance metadata (with a short timeout, so a cluster without IMDS only
 * waits a moment), then the region label of the Node the pod runs on. No source is a hard
 * dependency.
 */
final class RegionResolver {

  interface Imds {
    Optional<String> region();
  }

  private final Optional<String> flag;
  private final Map<String, String> env;
  private final Imds imds;
  private final Imds nodeLabels;

  RegionResolver(Optional<String> flag, Map<String, String> env, Imds imds) {
    this(flag, env, imds, Optional::empty);
  }

  RegionResolver(Optional<String> flag, Map<String, String> env, Imds imds, Imds nodeLabels) {
    this.flag = flag;
    this.env = env;
    this.imds = imds;
    this.nodeLabels = nodeLabels;
  }

  /** The region and where it came from; empty when no source has one. */
  Optional<Found> resolve() {
    if (flag.isPresent()) {
      return Optional.of(new Found(flag.get(), "--region"));
    }
    for (String name : new String[] {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
      String v = env.get(name);
      if (v != null && !v.isBlank()) {
        return Optional.of(new Found(v.strip(), name));
      }
    }
    if (!"true".equalsIgnoreCase(env.getOrDefault("AWS_EC2_METADATA_DISABLED", "").strip())) {
      Optional<String> fromImds = imds.region();
      if (fromImds.isPresent()) {
        return Optional.of(new Found(fromImds.get(), "instance metadata"));
      }
    }
    return nodeLabels.region().map(r -> new Found(r, "the node's region label"));
  }

  record Found(String region, String source) {}

  /** Instance metadata through the SDK's IMDS client, 1 s timeout, no retries. */
  static Imds instanceMetadata() {
    return () -> {
      try (Ec2MetadataClient client =
          Ec2MetadataClient.builder()
              .retryPolicy(Ec2MetadataRetryPolicy.none())
              .tokenTtl(Duration.ofMinutes(5))
              .build()) {
        String az = client.get("/latest/meta-data/placement/region").asString();
        return az.isBlank() ? Optional.empty() : Optional.of(az.strip());
      } catch (RuntimeException e) {
        return Optional.empty();
      }
    };
  }
}

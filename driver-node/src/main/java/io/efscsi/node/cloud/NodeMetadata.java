package io.efscsi.node.cloud;

import java.util.Optional;

/**
 * What the node knows about where it runs: from instance metadata (IMDS), else the Kubernetes Node
 * object (providerID, topology labels), else the node name (see the Go driver's
 * pkg/cloud/metadata.go order).
 */
public interface NodeMetadata {

  /** The CSI node id (the EC2 instance id, else the providerID's id, else the node name). */
  String nodeId();

  /** The AWS region ({@code us-east-1}). */
  String region();

  /** The availability zone name ({@code us-east-1a}), when known. */
  Optional<String> availabilityZone();

  /**
   * The availability zone id ({@code use1-az1}), when known (IMDS {@code
   * placement/availability-zone-id}). Cross-account mounts name the zone by id, because zone names
   * map to different zones in different accounts; without it the planner asks EC2
   * (DescribeAvailabilityZones).
   */
  default Optional<String> availabilityZoneId() {
    return Optional.empty();
  }
}

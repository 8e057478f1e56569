package io.efscsi.node.volume;

import java.util.List;
import java.util.Optional;

/**
 * Port: the EFS and EC2 calls that find a mount target when its DNS name does not resolve (the real
 * adapter is {@link AwsMountTargetLookup}). Failures are {@code DriverException}s; a denied call
 * names the IAM permission the node role lacks.
 */
public interface MountTargetLookup {

  /** {@code elasticfilesystem:DescribeMountTargets} for one file system. */
  List<MountTargetDescription> mountTargets(String region, String fileSystemId);

  /**
   * {@code ec2:DescribeAvailabilityZones}: the zone id ({@code use1-az1}) of a zone name; empty
   * when the region has no such zone.
   */
  Optional<String> availabilityZoneId(String region, String availabilityZoneName);

  /**
   * One mount target as DescribeMountTargets reports it.
   *
   * @param mountTargetId {@code fsmt-…}
   * @param availabilityZoneName {@code us-east-1a}
   * @param availabilityZoneId {@code use1-az1}
   * @param lifeCycleState {@code available}, {@code creating}, {@code deleting}…
   * @param ipAddress the IPv4 address, if any
   * @param ipv6Address the IPv6 address, if any
   */
  record MountTargetDescription(
      String mountTargetId,
      String availabilityZoneName,
      String availabilityZoneId,
      String lifeCycleState,
      Optional<String> ipAddress,
      Optional<String> ipv6Address) {

    public boolean available() {
      return "available".equals(lifeCycleState) && address().isPresent();
    }

    /** The address to connect to: IPv4 when there is one, else IPv6 (as efs-utils). */
    public Optional<String> address() {
      return ipAddress.or(() -> ipv6Address);
    }

    boolean inZone(String zone) {
      return zone.equals(availabilityZoneName) || zone.equals(availabilityZoneId);
    }
  }
}

package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.AvailabilityZone;
import software.amazon.awssdk.services.ec2.model.DescribeAvailabilityZonesResponse;
import software.amazon.awssdk.services.efs.EfsClient;
import software.amazon.awssdk.services.efs.model.DescribeMountTargetsRequest;
import software.amazon.awssdk.services.efs.model.DescribeMountTargetsResponse;

/**
 * {@link MountTargetLookup} on the AWS SDK's EFS and EC2 clients, one pair per region, created on
 * first use with the default credentials chain (IRSA, Pod Identity, instance profile). A denied
 * call becomes FAILED_PRECONDITION naming the permission the node role lacks.
 */
public final class AwsMountTargetLookup implements MountTargetLookup, AutoCloseable {

  static final String DESCRIBE_MOUNT_TARGETS = "elasticfilesystem:DescribeMountTargets";
  static final String DESCRIBE_AVAILABILITY_ZONES = "ec2:DescribeAvailabilityZones";

  private static final Set<String> DENIED =
      Set.of(
          "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess");

  // made at the first lookup: a node whose volumes all name their mount target never loads it
  private SdkHttpClient http;
  private final Map<String, EfsClient> efs = new ConcurrentHashMap<>();
  private final Map<String, Ec2Client> ec2 = new ConcurrentHashMap<>();

  @Override
  public List<MountTargetDescription> mountTargets(String region, String fileSystemId) {
    EfsClient client =
        efs.computeIfAbsent(
            region, r -> EfsClient.builder().region(Region.of(r)).httpClient(http()).build());
    List<MountTargetDescription> out = new ArrayList<>();
    String marker = null;
    try {
      do {
        DescribeMountTargetsResponse page =
            client.describeMountTargets(
                DescribeMountTargetsRequest.builder()
                    .fileSystemId(fileSystemId)
                    .marker(marker)
                    .build());
        for (var mt : page.mountTargets()) {
          out.add(
              new MountTargetDescription(
                  mt.mountTargetId(),
                  mt.availabilityZoneName(),
                  mt.availabilityZoneId(),
                  mt.lifeCycleStateAsString(),
                  Optional.ofNullable(mt.ipAddress()),
                  Optional.ofNullable(mt.ipv6Address())));
        }
        marker = page.nextMarker();
      } while (marker != null && !marker.isEmpty());
    } catch (SdkException e) {
      throw translate(e, DESCRIBE_MOUNT_TARGETS, "file system " + fileSystemId, region);
    }
    return out;
  }

  @Override
  public Optional<String> availabilityZoneId(String region, String availabilityZoneName) {
    Ec2Client client =
        ec2.computeIfAbsent(
            region, r -> Ec2Client.builder().region(Region.of(r)).httpClient(http()).build());
    try {
      DescribeAvailabilityZonesResponse zones =
          client.describeAvailabilityZones(b -> b.zoneNames(availabilityZoneName));
      return zones.availabilityZones().stream()
          .filter(z -> availabilityZoneName.equals(z.zoneName()))
          .map(AvailabilityZone::zoneId)
          .findFirst();
    } catch (SdkException e) {
      throw translate(
          e, DESCRIBE_AVAILABILITY_ZONES, "availability zone " + availabilityZoneName, region);
    }
  }

  /** An SDK failure as the driver reports it. */
  static DriverException translate(SdkException e, String permission, String what, String region) {
    if (e instanceof AwsServiceException s) {
      var details = s.awsErrorDetails();
      String code = details == null || details.errorCode() == null ? "" : details.errorCode();
      String detail =
          details == null ? String.valueOf(s.getMessage()) : code + ": " + details.errorMessage();
      if (DENIED.contains(code) || s.statusCode() == 403) {
        return new DriverException(
            DriverException.Kind.FAILED_PRECONDITION,
            "the node's IAM role may not call "
                + permission
                + " (needed to find a mount target when its DNS name does not resolve): "
                + detail
                + "; grant "
                + permission
                + " to the node role, or set mounttargetip",
            e);
      }
      if ("FileSystemNotFound".equals(code)) {
        return new DriverException(
            DriverException.Kind.NOT_FOUND,
            what + " not found in " + region + " (" + permission + "): " + detail,
            e);
      }
      return new DriverException(
          DriverException.Kind.UNAVAILABLE,
          permission + " for " + what + " in " + region + " failed: " + detail,
          e);
    }
    return new DriverException(
        DriverException.Kind.UNAVAILABLE,
        permission + " for " + what + " in " + region + " failed: " + e.getMessage(),
        e);
  }

  private synchronized SdkHttpClient http() {
    if (http == null) {
      http = UrlConnectionHttpClient.create();
    }
    return http;
  }

  @Override
  public void close() {
    efs.values().forEach(EfsClient::close);
    ec2.values().forEach(Ec2Client::close);
    synchronized (this) {
      if (http != null) {
        http.close();
      }
    }
  }
}

package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.Cloud.AccessPoint;
import io.efscsi.controller.cloud.CloudSource;
import java.util.Map;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A claim that grows: its size recorded where CreateVolume recorded it. */
final class VolumeExpansion {

  private static final Logger log = LoggerFactory.getLogger(VolumeExpansion.class);

  private final CloudSource clouds;
  private final BiPredicate<VolumeId, Map<String, String>> exists;

  VolumeExpansion(CloudSource clouds, BiPredicate<VolumeId, Map<String, String>> exists) {
    this.clouds = clouds;
    this.exists = exists;
  }

  /**
   * ControllerExpandVolume. EFS has no capacity to grow (it is elastic), so an expansion records
   * the new size where CreateVolume recorded the requested one, the access point's {@link
   * Tags#CAPACITY_KEY} tag, and answers it; asking again for the recorded size changes nothing. An
   * access point without that tag (not made by this driver with a capacity) and a whole file system
   * have nothing to record: the size asked for is answered. A smaller size than the recorded one is
   * OUT_OF_RANGE; an S3 Files volume is INVALID_ARGUMENT; a volume whose access point or file
   * system is gone is NOT_FOUND.
   *
   * @param handle the volume handle as the caller gave it (for messages)
   * @return the capacity the volume now has, in bytes
   */
  long expand(String handle, VolumeId id, long requiredBytes, Map<String, String> secrets) {
    if (id.s3files()) {
      throw DriverException.invalidArgument(
          "Volume %s is an Amazon S3 Files volume: its size follows its bucket, there is no"
              + " capacity to expand",
          handle);
    }
    if (id.accessPointId().isEmpty()) {
      if (!exists.test(id, secrets)) {
        throw DriverException.notFound(
            "Volume %s not found: its file system %s does not exist", handle, id.fileSystemId());
      }
      return requiredBytes;
    }
    String apId = id.accessPointId().get();
    Cloud cloud = CrossAccount.parse(secrets).cloud(clouds, false, id.toString());
    AccessPoint ap =
        cloud
            .describeAccessPoint(id.fileSystemId(), apId)
            .filter(a -> a.fileSystemId().equals(id.fileSystemId()))
            .orElseThrow(() ->
                DriverException.notFound(
                    "Volume %s not found: its access point %s does not exist", handle, apId));
    String recorded = ap.tags().get(Tags.CAPACITY_KEY);
    if (recorded == null) {
      return requiredBytes;
    }
    long current;
    try {
      current = Long.parseLong(recorded);
    } catch (NumberFormatException e) {
      current = 0; // not a size this driver wrote: the new one replaces it
    }
    if (requiredBytes < current) {
      throw DriverException.outOfRange(
          "Volume %s cannot shrink from %d to %d bytes: a claim's size can only grow",
          handle, current, requiredBytes);
    }
    if (requiredBytes == current) {
      return current;
    }
    cloud.tagAccessPoint(apId, Map.of(Tags.CAPACITY_KEY, Long.toString(requiredBytes)));
    log.info(
        "{}: capacity {} -> {} bytes (tag {})", handle, current, requiredBytes, Tags.CAPACITY_KEY);
    return requiredBytes;
  }
}

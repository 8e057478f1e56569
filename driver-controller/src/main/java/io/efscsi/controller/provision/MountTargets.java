package io.efscsi.controller.provision;

import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.Cloud.MountTarget;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The volume attributes a cross-account volume needs on the node: {@code crossaccount} (efs-utils
 * resolves the mount target by DNS), {@code mounttargetip} (the StorageClass names an {@code az}),
 * or {@code mounttargetipmap} (every available mount target by zone; each node picks its own). A
 * volume in the controller's own account needs none. A failed lookup leaves the attribute out, as
 * in the Go driver: the node then resolves the file system by DNS.
 */
final class MountTargets {

  private static final Logger log = LoggerFactory.getLogger(MountTargets.class);

  Map<String, String> volumeContext(
      Cloud cloud, CrossAccount xa, String fsId, Optional<String> az) {
    if (xa.roleArn().isEmpty()) {
      return Map.of();
    }
    if (xa.dns()) {
      return Map.of(CrossAccount.CROSS_ACCOUNT, "true");
    }
    List<MountTarget> available;
    try {
      available = cloud.describeMountTargets(fsId).stream().filter(MountTarget::available).toList();
    } catch (RuntimeException e) {
      log.warn(
          "Failed to describe mount targets for file system {}. Skip using `mounttargetip`"
              + " mount option: {}",
          fsId,
          e.getMessage());
      return Map.of();
    }
    if (available.isEmpty()) {
      log.warn("file system {} has no available mount target", fsId);
      return Map.of();
    }
    if (az.isPresent()) {
      MountTarget mt =
          available.stream()
              .filter(m -> m.availabilityZone().equals(az.get()))
              .findFirst()
              .orElseGet(() -> {
                log.warn("no mount target of {} in {}, picking one at random", fsId, az.get());
                return available.get(ThreadLocalRandom.current().nextInt(available.size()));
              });
      return Map.of("mounttargetip", mt.ipAddress());
    }
    Map<String, String> byZone = new TreeMap<>();
    available.forEach(m -> byZone.putIfAbsent(m.availabilityZone(), m.ipAddress()));
    try {
      // Jackson, which the module carries for the S3 Files REST API: escaped as JSON must be
      return Map.of("mounttargetipmap", Mapper.JSON.writeValueAsString(byZone));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the mount target map " + byZone, e);
    }
  }

  /** Loaded with the first cross-account volume that needs a map. */
  private static final class Mapper {
    static final com.fasterxml.jackson.databind.ObjectMapper JSON =
        new com.fasterxml.jackson.databind.ObjectMapper();
  }
}

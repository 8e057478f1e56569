package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.Cloud.AccessPoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What DeleteVolume does with an access point's root directory before the access point goes: the
 * volume's {@link OnDelete} (its {@link Tags#ON_DELETE_KEY} tag, else {@code
 * --delete-access-point-root-dir}), within {@link RootDirectoryGuard}'s rules, through the node's
 * mount path ({@link DirectoryRemover}). The remover is there exactly when the flag is on: only
 * then may the controller mount file systems (the chart makes it privileged for that), so without
 * it a CreateVolume asking for delete or archive is refused, and DeleteVolume touches no directory
 * and reads no tag: it stays the one DeleteAccessPoint call it always was (an extra
 * DescribeAccessPoints on every delete took a 1,000-claim delete storm's p99 from 23 s to 96 s
 * against an API limited to 50 requests a second). A volume made with delete or archive while the
 * flag was on keeps its directory once the flag is off.
 */
final class RootDirectoryDisposal {

  private static final Logger log = LoggerFactory.getLogger(RootDirectoryDisposal.class);

  private final Optional<DirectoryRemovals> removals;
  private final String region;

  RootDirectoryDisposal(Optional<DirectoryRemover> remover, String region) {
    this.removals = remover.map(DirectoryRemovals::new);
    this.region = region;
  }

  /** What a volume that does not say gets. */
  OnDelete byDefault() {
    return OnDelete.byFlag(removals.isPresent());
  }

  /** CreateVolume: FAILED_PRECONDITION when this controller cannot honour the volume's onDelete. */
  void checkHonoured(String name, Optional<OnDelete> onDelete) {
    if (onDelete.isPresent() && onDelete.get() != OnDelete.RETAIN && removals.isEmpty()) {
      throw DriverException.failedPrecondition(
          "volume %s: %s %s needs a controller that can mount the file system: run it with"
              + " --delete-access-point-root-dir (the chart's controller.deleteAccessPointRootDir)",
          name, ProvisioningParameters.ON_DELETE, onDelete.get().value());
    }
  }

  /**
   * Removes, archives or keeps the root directory of the volume's access point.
   *
   * @return false when the access point no longer exists (nothing left to do)
   * @throws DriverException FAILED_PRECONDITION when the guard refuses or the tag holds a value
   *     this controller does not know (nothing is deleted then); ABORTED while a removal still runs
   */
  boolean dispose(Cloud cloud, String volumeId, VolumeId id, Duration wait) {
    if (id.s3files()) {
      if (removals.isPresent()) {
        log.warn(
            "DeleteVolume {}: --delete-access-point-root-dir does not remove the root directory of"
                + " an S3 Files access point; the directory (and its objects in the bucket) stays",
            volumeId);
      }
      return true;
    }
    if (removals.isEmpty()) {
      return true; // without the flag no directory is touched: nothing to read
    }
    String apId = id.accessPointId().orElseThrow();
    Optional<AccessPoint> ap = cloud.describeAccessPoint(id.fileSystemId(), apId);
    if (ap.isEmpty()) {
      return false;
    }
    String tag = ap.get().tags().get(Tags.ON_DELETE_KEY);
    OnDelete onDelete = onDelete(volumeId, ap.get(), tag);
    if (onDelete == OnDelete.RETAIN) {
      if (tag != null) {
        log.info(
            "DeleteVolume {}: keeping the root directory {} of access point {}: onDelete retain",
            volumeId,
            ap.get().rootPath(),
            apId);
      }
      return true;
    }
    guarded(cloud, volumeId, id, ap.get(), tag, onDelete, wait);
    return true;
  }

  /** The access point's onDelete; FAILED_PRECONDITION for a tag value it does not know. */
  private OnDelete onDelete(String volumeId, AccessPoint ap, String tag) {
    if (tag == null) {
      return byDefault();
    }
    OnDelete onDelete =
        OnDelete.read(tag)
            .orElseThrow(() ->
                refused(
                    volumeId,
                    ap.id(),
                    tag,
                    "touching",
                    "its tag " + Tags.ON_DELETE_KEY + " is '" + tag + "'"));
    return onDelete;
  }

  private static String doing(OnDelete onDelete) {
    return onDelete == OnDelete.ARCHIVE ? "archiving" : "removing";
  }

  /** Removes or archives the directory when {@link RootDirectoryGuard} allows it. */
  private void guarded(
      Cloud cloud,
      String volumeId,
      VolumeId id,
      AccessPoint ap,
      String tag,
      OnDelete onDelete,
      Duration wait) {
    String apId = ap.id();
    List<AccessPoint> sameFs = new ArrayList<>();
    if (ap.fileSystemId().equals(id.fileSystemId())) {
      cloud.listAccessPoints(id.fileSystemId(), sameFs::add);
    }
    switch (RootDirectoryGuard.check(ap, id.fileSystemId(), sameFs)) {
      case RootDirectoryGuard.Refuse r ->
          throw refused(volumeId, apId, tag, doing(onDelete), r.reason());
      case RootDirectoryGuard.Keep k ->
          log.warn(
              "DeleteVolume {}: keeping the root directory {} of access point {}: {}",
              volumeId,
              ap.rootPath(),
              apId,
              k.reason());
      case RootDirectoryGuard.Remove r -> {
        String mountTarget = mountTargetFor(cloud, id.fileSystemId(), volumeId, r.path());
        var target =
            new DirectoryRemover.Target(region, id.fileSystemId(), mountTarget, apId, r.path());
        String outcome =
            onDelete == OnDelete.ARCHIVE
                ? removals.get().archive(target, wait).map(to -> "archived as " + to).orElse(null)
                : removals.get().remove(target, wait) ? "removed" : null;
        log.info(
            "DeleteVolume {}: root directory {} of access point {} {}",
            volumeId,
            r.path(),
            apId,
            outcome == null ? "did not exist" : outcome);
      }
    }
  }

  private static DriverException refused(
      String volumeId, String apId, String tag, String doing, String reason) {
    return DriverException.failedPrecondition(
        "DeleteVolume %s: not %s the root directory of access point %s: %s. Nothing"
            + " was deleted; delete the access point by hand, or %s",
        volumeId,
        doing,
        apId,
        reason,
        tag == null
            ? "run the controller without --delete-access-point-root-dir"
            : "tag it " + Tags.ON_DELETE_KEY + "=" + OnDelete.RETAIN.value());
  }

  /** An available mount target of the file system (the first by zone name, for repeatability). */
  private static String mountTargetFor(Cloud cloud, String fsId, String volumeId, String path) {
    return cloud.describeMountTargets(fsId).stream()
        .filter(m -> m.available() && m.ipAddress() != null && !m.ipAddress().isBlank())
        .sorted(Comparator.comparing(Cloud.MountTarget::availabilityZone))
        .map(Cloud.MountTarget::ipAddress)
        .findFirst()
        .orElseThrow(() ->
            DriverException.unavailable(
                "DeleteVolume %s: file system %s has no available mount target to reach the"
                    + " directory %s through; nothing was deleted",
                volumeId, fsId, path));
  }
}

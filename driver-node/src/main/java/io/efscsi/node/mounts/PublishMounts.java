package io.efscsi.node.mounts;

import io.efscsi.common.error.DriverException;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPoints;
import io.efscsi.supervisor.host.Mounter;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodePublish and NodeUnpublish: a bind mount of the staging mount into the pod's target path
 * (read-only when asked). Hundreds of pods on one volume cost hundreds of bind mounts, one NFS
 * mount and one proxy.
 */
public final class PublishMounts {

  private static final Logger LOG = LoggerFactory.getLogger(PublishMounts.class);

  /** Told when a target is gone (a taken-over proxy serving it may go too). */
  @FunctionalInterface
  public interface Unpublished {
    void unpublished(Path target) throws IOException;

    Unpublished NONE = target -> {};
  }

  /** Whether a taken-over proxy of ours serves a volume's file system at a target. */
  @FunctionalInterface
  public interface TakenOver {
    boolean serves(String volumeId, Path target);

    TakenOver NONE = (volumeId, target) -> false;
  }

  private final Mounter mounter;
  private final MountPoints mounts;
  private final Duration unmountWait;
  private final Unpublished unpublished;
  private final TakenOver takenOver;

  public PublishMounts(Mounter mounter, MountPoints mounts, Duration unmountWait) {
    this(mounter, mounts, unmountWait, Unpublished.NONE, TakenOver.NONE);
  }

  public PublishMounts(
      Mounter mounter,
      MountPoints mounts,
      Duration unmountWait,
      Unpublished unpublished,
      TakenOver takenOver) {
    this.mounter = mounter;
    this.mounts = mounts;
    this.unmountWait = unmountWait;
    this.unpublished = unpublished;
    this.takenOver = takenOver;
  }

  public void publish(String volumeId, Path stagingPath, Path targetPath, boolean readOnly)
      throws IOException {
    if (mounts.at(targetPath).filter(MountInfo::isLoopbackNfs).isPresent()
        && takenOver.serves(volumeId, targetPath)) {
      // the Go driver's mount of this volume, taken over: already published (kubelet publishes
      // again after its own restart)
      return;
    }
    Optional<MountInfo> staged = mounts.at(stagingPath);
    if (staged.isEmpty()) {
      throw DriverException.failedPrecondition(
          "volume %s is not staged at %s: call NodeStageVolume first", volumeId, stagingPath);
    }
    Optional<MountInfo> existing = mounts.at(targetPath);
    if (existing.isPresent()) {
      MountInfo t = existing.get();
      boolean sameVolume =
          t.device().equals(staged.get().device()) && t.root().equals(staged.get().root());
      boolean ro = t.mountOptions().startsWith("ro");
      if (sameVolume && ro == readOnly) {
        return; // already published
      }
      throw DriverException.alreadyExists(
          "target path %s is already mounted (%s %s, %s) differently from this request (volume %s, %s)",
          targetPath,
          t.fsType(),
          t.source(),
          ro ? "read-only" : "read-write",
          volumeId,
          readOnly ? "read-only" : "read-write");
    }
    boolean created = !Files.isDirectory(targetPath);
    Files.createDirectories(targetPath);
    try {
      mounter.bind(stagingPath, targetPath, readOnly);
      if (!mounts.isMounted(targetPath)) {
        throw new IOException(
            "the bind mount succeeded but " + targetPath + " is not in the mount table");
      }
    } catch (IOException | RuntimeException e) {
      if (created) {
        removeEmptyDir(targetPath);
      }
      throw DriverException.internal(
          "volume "
              + volumeId
              + ": bind mount of "
              + stagingPath
              + " at "
              + targetPath
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Unmounts whatever is at the target: our bind mount, or the NFS mount the Go driver made there
   * directly (a taken-over mount, whose proxy {@link Unpublished} then lets go).
   */
  public void unpublish(String volumeId, Path targetPath) throws IOException {
    if (mounts.isMounted(targetPath)) {
      Unmounts.unmount(mounter, mounts, targetPath, unmountWait);
    }
    unpublished.unpublished(targetPath);
    removeEmptyDir(targetPath);
    LOG.debug("volume {} unpublished from {}", volumeId, targetPath);
  }

  /** Removes the target directory only when it is an empty directory and not a mount point. */
  private void removeEmptyDir(Path dir) throws IOException {
    if (mounts.isMounted(dir)) {
      return;
    }
    try {
      Files.deleteIfExists(dir);
    } catch (DirectoryNotEmptyException e) {
      LOG.warn("{} is not empty after unmount; left in place", dir);
    }
  }
}

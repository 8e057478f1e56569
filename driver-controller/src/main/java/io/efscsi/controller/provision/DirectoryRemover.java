package io.efscsi.controller.provision;

import java.util.Optional;

/**
 * Port: removes or archives an access point's root directory in its file system. The controller
 * does not mount anything itself; the launcher wires in the node's mount path (a proxy from the
 * mount supervisor and the same mount command as NodeStageVolume), so the directory is reached
 * exactly the way a node reaches a volume.
 */
public interface DirectoryRemover {

  /** The archived name of a directory is this prefix and its name ({@link #archive}). */
  String ARCHIVE_PREFIX = "archived-";

  /**
   * What to remove or archive.
   *
   * @param region the file system's region
   * @param fileSystemId {@code fs-…}
   * @param mountTargetIp the mount target to reach the file system through
   * @param accessPointId the access point whose root this is (names the temporary mount)
   * @param path the absolute path of the directory inside the file system, already checked by
   *     {@link RootDirectoryGuard}
   */
  record Target(
      String region,
      String fileSystemId,
      String mountTargetIp,
      String accessPointId,
      String path) {}

  /**
   * Removes the directory and everything below it, never following a symbolic link and never
   * crossing into another mount. Blocks until done.
   *
   * @return false when the directory did not exist
   * @throws io.efscsi.common.error.DriverException when it cannot be reached or removed
   */
  boolean remove(Target target);

  /**
   * Renames the directory to {@code archived-<name>} in the same parent directory, or when that is
   * taken to the first free {@code archived-<name>-2}, {@code -3}, …: an existing directory is
   * never replaced. Never follows a symbolic link. Blocks until done.
   *
   * @return the archived path, empty when the directory did not exist (already archived by an
   *     earlier attempt, or never made)
   * @throws io.efscsi.common.error.DriverException when it cannot be reached or renamed
   */
  Optional<String> archive(Target target);
}

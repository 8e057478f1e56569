package io.efscsi.controller.provision;

/**
 * Port: removes an access point's root directory, and everything below it, from its file system.
 * The controller does not mount anything itself; the launcher wires in the node's mount path (a
 * proxy from the mount supervisor and the same mount command as NodeStageVolume), so the directory
 * is reached exactly the way a node reaches a volume.
 */
@FunctionalInterface
public interface DirectoryRemover {

  /**
   * What to remove.
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
}

package io.efscsi.controller.cloud;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The EFS API as the controller needs it, or the same calls made to Amazon S3 Files (whose access
 * points and file systems have the EFS shapes). Implementations throw {@link CloudException} with a
 * {@link CloudException.Reason}; nothing else escapes.
 */
public interface Cloud {

  /** Who this client acts as: "default", or the assumed role; scopes per-account caches. */
  String identity();

  FileSystem describeFileSystem(String fileSystemId);

  /**
   * Creates an access point, idempotent by client token.
   *
   * @throws CloudException {@code ALREADY_EXISTS} carrying the existing id when the token was used
   *     with other parameters
   */
  AccessPoint createAccessPoint(AccessPointRequest request);

  /**
   * The access point, or empty when it does not exist. EFS looks it up by id alone; S3 Files (whose
   * IAM policy for the Go driver grants no describe call) by listing {@code fileSystemId}'s access
   * points, so an access point of another file system is not found there.
   */
  Optional<AccessPoint> describeAccessPoint(String fileSystemId, String accessPointId);

  /**
   * Every access point of the file system, page by page. S3 Files listings carry no client token
   * and no tags (empty here).
   */
  void listAccessPoints(String fileSystemId, Consumer<AccessPoint> each);

  /** Deletes the access point; false when it did not exist. */
  boolean deleteAccessPoint(String accessPointId);

  List<MountTarget> describeMountTargets(String fileSystemId);

  /**
   * Adds or replaces tags of an access point (EFS TagResource), keeping its others. The IAM policy
   * the Go driver documents allows it on access points tagged {@code efs.csi.aws.com/cluster}: the
   * ones this driver made.
   */
  void tagAccessPoint(String accessPointId, Map<String, String> tags);

  /** A file system; {@code availabilityZone} is present for One Zone file systems. */
  record FileSystem(String id, Optional<String> availabilityZone) {}

  /** An access point; uid and gid are -1 when it has no POSIX user. */
  record AccessPoint(
      String id,
      String fileSystemId,
      String clientToken,
      long uid,
      long gid,
      String rootPath,
      Map<String, String> tags) {}

  record AccessPointRequest(
      String clientToken,
      String fileSystemId,
      long uid,
      long gid,
      String rootPath,
      String permissions,
      Map<String, String> tags) {}

  record MountTarget(String id, String availabilityZone, String ipAddress, boolean available) {}
}

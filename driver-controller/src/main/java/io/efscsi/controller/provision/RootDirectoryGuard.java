package io.efscsi.controller.provision;

import io.efscsi.controller.cloud.Cloud.AccessPoint;
import java.util.Collection;

/**
 * Whether DeleteVolume may remove an access point's root directory ({@code
 * --delete-access-point-root-dir}). The Go driver removed whatever the access point's root was, and
 * so wiped whole file systems (#1085, #1695: an access point rooted at {@code /}); here a directory
 * is removed only when it is
 *
 * <ul>
 *   <li>of an access point of the file system named in the volume id (#1926),
 *   <li>a clean absolute path other than {@code /},
 *   <li>strictly below the basePath it was provisioned under (the {@link Tags#BASE_PATH_KEY} tag;
 *       access points without it, such as the Go driver's, count as provisioned under {@code /}),
 *   <li>and not the root of another access point, nor above one: its data is still in use
 *       (subPathPattern without ensureUniqueDirectory, or an access point made by hand).
 * </ul>
 *
 * The first three refuse the whole delete (nothing is deleted, the access point is kept, so the
 * operator sees the error and can act); the last keeps the directory and lets the access point go.
 */
public final class RootDirectoryGuard {

  /** What to do with the directory. */
  public sealed interface Verdict {}

  /** Remove {@code path}. */
  public record Remove(String path) implements Verdict {}

  /** Keep the directory (still in use), delete the access point. */
  public record Keep(String reason) implements Verdict {}

  /** Delete nothing: something is wrong with the access point. */
  public record Refuse(String reason) implements Verdict {}

  private RootDirectoryGuard() {}

  /**
   * @param ap the access point being deleted
   * @param volumeFileSystemId the file system named in the volume id
   * @param sameFileSystem every access point of that file system (a fresh listing; may contain
   *     {@code ap} itself)
   */
  public static Verdict check(
      AccessPoint ap, String volumeFileSystemId, Collection<AccessPoint> sameFileSystem) {
    if (!ap.fileSystemId().equals(volumeFileSystemId)) {
      return new Refuse(
          "it belongs to file system "
              + ap.fileSystemId()
              + ", not to "
              + volumeFileSystemId
              + " of the volume id");
    }
    String root = ap.rootPath() == null ? "" : ap.rootPath();
    if (root.isEmpty() || root.equals("/")) {
      return new Refuse("its root directory is / (removing it would empty the whole file system)");
    }
    if (!root.startsWith("/") || !AccessPointPath.clean(root).equals(root)) {
      return new Refuse("its root directory '" + root + "' is not a clean absolute path");
    }
    String base = AccessPointPath.clean("/" + ap.tags().getOrDefault(Tags.BASE_PATH_KEY, "/"));
    if (!base.equals("/") && !root.startsWith(base + "/")) {
      return new Refuse(
          "its root directory " + root + " is not below the basePath " + base + " it was made for");
    }
    for (AccessPoint other : sameFileSystem) {
      if (other.id().equals(ap.id())) {
        continue;
      }
      String o = other.rootPath() == null || other.rootPath().isEmpty() ? "/" : other.rootPath();
      if (o.equals(root) || o.startsWith(root + "/")) {
        return new Keep(
            "access point "
                + other.id()
                + (o.equals(root)
                    ? " has the same root directory"
                    : " has its root " + o + " below it"));
      }
    }
    return new Remove(root);
  }
}

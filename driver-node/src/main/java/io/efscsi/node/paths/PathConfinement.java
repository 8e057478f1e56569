package io.efscsi.node.paths;

import io.efscsi.common.error.DriverException;
import io.efscsi.supervisor.host.MountPoints;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Keeps the paths a CSI call names (staging_target_path, target_path, volume_path) below the
 * kubelet's root directory ({@code --kubelet-root-dir}) once symbolic links are resolved, so that
 * no call mounts, unmounts or reads anywhere else on the node.
 *
 * <p>A path is resolved as the kernel would walk it: its parent through the deepest ancestor that
 * exists ({@link Path#toRealPath}), the names below that appended as they are (a path that does not
 * exist yet is fine). Its last name is looked up in the mount table first: a mount point is never a
 * symbolic link, and it is never stat'ed (a dead NFS mount would hang the call). Otherwise a
 * symbolic link there is followed, at most 40 deep as Linux does. The kubelet dir itself is
 * resolved the same way on every call.
 *
 * <p>The callers keep using the path as given; the resolution only decides.
 */
public final class PathConfinement {

  private static final int MAX_LINKS = 40;

  private final Path root;
  private final MountPoints mounts;

  /**
   * @param kubeletRoot the kubelet's root directory: absolute and normalised
   */
  public PathConfinement(Path kubeletRoot, MountPoints mounts) {
    if (!kubeletRoot.isAbsolute() || !kubeletRoot.normalize().equals(kubeletRoot)) {
      throw new IllegalArgumentException(
          "the kubelet root dir must be an absolute, normalised path, got " + kubeletRoot);
    }
    this.root = kubeletRoot;
    this.mounts = mounts;
  }

  /** The kubelet root dir as configured. */
  public Path root() {
    return root;
  }

  /**
   * Checks that {@code path} (absolute, normalised) lies below the kubelet dir once resolved.
   *
   * @param field the request field, for the message
   * @param outside the kind of error for a path outside (INVALID_ARGUMENT for the mount calls,
   *     NOT_FOUND for NodeGetVolumeStats: no volume of this driver is mounted there)
   * @throws DriverException of kind {@code outside} naming the field, the value and what it
   *     resolved to; INVALID_ARGUMENT when the path cannot be resolved
   */
  public void check(String field, Path path, DriverException.Kind outside) {
    Path real;
    Path realRoot;
    try {
      real = resolve(path);
      realRoot = resolve(root);
    } catch (IOException e) {
      throw DriverException.invalidArgument(
          "%s '%s' cannot be resolved: %s", field, path, e.getMessage());
    }
    if (!real.startsWith(realRoot) || real.equals(realRoot)) {
      throw new DriverException(
          outside,
          String.format(
              "%s '%s' is not below the kubelet root dir %s%s: this driver mounts only where the"
                  + " kubelet asks (--kubelet-root-dir)",
              field,
              path,
              root,
              real.equals(path) && realRoot.equals(root)
                  ? ""
                  : " (it resolves to " + real + ", the kubelet root dir to " + realRoot + ")"));
    }
  }

  /** {@code path} with symbolic links resolved, without stat'ing a mount point at its end. */
  Path resolve(Path path) throws IOException {
    return resolve(path, 0);
  }

  private Path resolve(Path path, int links) throws IOException {
    Path name = path.getFileName();
    if (name == null) {
      return path; // "/"
    }
    if (name.toString().equals(".") || name.toString().equals("..")) {
      return existingPrefix(path, links);
    }
    Path parent = existingPrefix(path.getParent(), links);
    Path candidate = parent.resolve(name);
    if (mounts.isMounted(candidate) || !Files.isSymbolicLink(candidate)) {
      return candidate;
    }
    if (links >= MAX_LINKS) {
      throw new IOException("too many levels of symbolic links at " + candidate);
    }
    return resolve(parent.resolve(Files.readSymbolicLink(candidate)), links + 1);
  }

  /**
   * {@code path} resolved through its deepest ancestor that exists (itself included; a link that
   * points nowhere counts as existing and is followed), with the names below it appended and
   * normalised: they do not exist, so none of them is a link.
   */
  private Path existingPrefix(Path path, int links) throws IOException {
    Path existing = path;
    while (existing.getParent() != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    Path real = Files.isSymbolicLink(existing) ? resolve(existing, links) : existing.toRealPath();
    return real.resolve(existing.relativize(path)).normalize();
  }
}

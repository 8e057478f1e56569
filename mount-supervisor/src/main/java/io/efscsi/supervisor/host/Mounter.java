package io.efscsi.supervisor.host;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The kernel's mount calls, each bounded by a timeout: the node's NFS and bind mounts and the
 * supervisor's lazy unmount of an orphan ({@link Unmounter}) go through the same adapter.
 */
public interface Mounter extends Unmounter {

  /** {@code mount -t nfs4 -o <options> <source> <target>}. */
  void mountNfs(String source, Path target, List<String> options) throws IOException;

  /** A bind mount of {@code source} at {@code target}, remounted read-only when asked. */
  void bind(Path source, Path target, boolean readOnly) throws IOException;

  /** A normal unmount; throws when it fails or times out (busy, hung server). */
  void unmount(Path target) throws IOException;
}

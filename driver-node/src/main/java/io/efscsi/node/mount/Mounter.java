package io.efscsi.node.mount;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** The kernel's mount calls, each bounded by a timeout. */
public interface Mounter {

  /** {@code mount -t nfs4 -o <options> <source> <target>}. */
  void mountNfs(String source, Path target, List<String> options) throws IOException;

  /** A bind mount of {@code source} at {@code target}, remounted read-only when asked. */
  void bind(Path source, Path target, boolean readOnly) throws IOException;

  /** A normal unmount; throws when it fails or times out (busy, hung server). */
  void unmount(Path target) throws IOException;

  /** MNT_DETACH: gone from the namespace at once, released when its last user goes. */
  void lazyUnmount(Path target) throws IOException;
}

package io.efscsi.supervisor.host;

import java.io.IOException;
import java.nio.file.Path;

/** Detaches mounts. */
public interface Unmounter {

  /**
   * Lazily unmounts (MNT_DETACH): the mount point disappears from the namespace at once and the
   * file system is released when its last user goes. Never waits on the NFS server.
   */
  void lazyUnmount(Path mountPoint) throws IOException;
}

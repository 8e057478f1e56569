package io.efscsi.node.mounts;

import io.efscsi.common.error.DriverException;
import io.efscsi.supervisor.host.MountPoints;
import io.efscsi.supervisor.host.Mounter;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Unmount that returns only when the path is gone from the mount table. */
final class Unmounts {

  private static final Logger LOG = LoggerFactory.getLogger(Unmounts.class);

  private Unmounts() {}

  /**
   * A normal unmount (bounded); when it fails or times out (busy, dead server), a lazy unmount.
   * Every mount stacked at the path goes. Throws when the path is still mounted afterwards.
   */
  static void unmount(Mounter mounter, MountPoints mounts, Path path, Duration wait)
      throws IOException {
    for (int layer = 0; layer < 16 && mounts.isMounted(path); layer++) {
      try {
        mounter.unmount(path);
      } catch (IOException e) {
        LOG.warn("unmount of {} failed ({}); detaching it lazily", path, e.getMessage());
        mounter.lazyUnmount(path);
      }
    }
    if (!mounts.awaitGone(path, wait)) {
      throw DriverException.internal(
          path + " is still in the mount table after unmount and lazy unmount", null);
    }
  }
}

package io.efscsi.node.paths;

import io.efscsi.common.identity.Readiness;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Ready when the state directory exists (it is created if missing) and a file can be written,
 * synced and removed in it. The state dir is a local hostPath, never NFS, so this cannot hang.
 */
public final class StateDirCheck implements Readiness.Check {

  private final Path dir;

  public StateDirCheck(Path dir) {
    this.dir = dir;
  }

  @Override
  public String name() {
    return "state dir " + dir;
  }

  @Override
  public String notReadyReason() {
    Path probe = null;
    try {
      Files.createDirectories(dir);
      probe = Files.createTempFile(dir, ".probe-", ".tmp");
      try (var ch =
          java.nio.channels.FileChannel.open(probe, java.nio.file.StandardOpenOption.WRITE)) {
        ch.write(java.nio.ByteBuffer.wrap(new byte[] {1}));
        ch.force(true);
      }
      return null;
    } catch (IOException | SecurityException e) {
      return "not writable: " + e;
    } finally {
      if (probe != null) {
        try {
          Files.deleteIfExists(probe);
        } catch (IOException ignored) {
          // the next probe creates its own file; a leftover is harmless and tiny
        }
      }
    }
  }
}

package io.efscsi.supervisor.mounts;

import io.efscsi.supervisor.process.Commands;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * {@code umount --lazy --no-canonicalize --internal-only}: MNT_DETACH without resolving the path
 * (canonicalising would stat a possibly dead NFS mount point) and without the umount.nfs helper
 * (which may talk to the server). "Not mounted" counts as done.
 */
public final class CommandUnmounter implements Unmounter {

  private final String umount;
  private final Duration timeout;

  public CommandUnmounter(String umount, Duration timeout) {
    this.umount = umount;
    this.timeout = timeout;
  }

  @Override
  public void lazyUnmount(Path mountPoint) throws IOException {
    Commands.Result r =
        Commands.run(
            List.of(
                umount, "--lazy", "--no-canonicalize", "--internal-only", mountPoint.toString()),
            timeout);
    if (!r.ok() && !r.output().contains("not mounted")) {
      throw new IOException(
          "umount -l " + mountPoint + " failed (exit " + r.exitCode() + "): " + r.output());
    }
  }
}

package io.efscsi.supervisor.host;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * mount(8)/umount(8) with timeouts, the one real {@link Mounter}. Paths are never canonicalised by
 * umount ({@code -c}): that would stat a possibly dead NFS mount point. The NFS mount command can
 * be replaced (a helper that takes {@code -o <options> <source> <target>}) for machines without an
 * NFS client.
 */
public final class CommandMounter implements Mounter {

  private final List<String> nfsMount;
  private final Duration mountTimeout;
  private final Duration unmountTimeout;

  /**
   * @param nfsMount the NFS mount command ({@code mount -t nfs4}); the arguments {@code -o
   *     <options> <source> <target>} are appended
   */
  public CommandMounter(List<String> nfsMount, Duration mountTimeout, Duration unmountTimeout) {
    this.nfsMount = List.copyOf(nfsMount);
    this.mountTimeout = mountTimeout;
    this.unmountTimeout = unmountTimeout;
  }

  @Override
  public void mountNfs(String source, Path target, List<String> options) throws IOException {
    List<String> cmd = new ArrayList<>(nfsMount);
    cmd.addAll(List.of("-o", String.join(",", options), source, target.toString()));
    check(Commands.run(cmd, mountTimeout), cmd);
  }

  @Override
  public void bind(Path source, Path target, boolean readOnly) throws IOException {
    List<String> bind = List.of("mount", "--bind", source.toString(), target.toString());
    check(Commands.run(bind, mountTimeout), bind);
    if (readOnly) {
      List<String> ro = List.of("mount", "-o", "remount,bind,ro", target.toString());
      Commands.Result r = Commands.run(ro, mountTimeout);
      if (!r.ok()) {
        lazyUnmount(target); // never leave a writable mount where read-only was asked
        check(r, ro);
      }
    }
  }

  @Override
  public void unmount(Path target) throws IOException {
    List<String> cmd = List.of("umount", "-c", target.toString());
    check(Commands.run(cmd, unmountTimeout), cmd);
  }

  /**
   * {@code umount --lazy --no-canonicalize --internal-only}: MNT_DETACH without resolving the path
   * and without the umount.nfs helper (which may talk to the server). "Not mounted" counts as done.
   */
  @Override
  public void lazyUnmount(Path target) throws IOException {
    List<String> cmd =
        List.of("umount", "--lazy", "--no-canonicalize", "--internal-only", target.toString());
    Commands.Result r = Commands.run(cmd, unmountTimeout);
    if (!r.ok() && !r.output().contains("not mounted")) {
      check(r, cmd);
    }
  }

  private static void check(Commands.Result r, List<String> cmd) throws IOException {
    if (!r.ok()) {
      throw new IOException(
          String.join(" ", cmd) + " failed (exit " + r.exitCode() + "): " + r.output());
    }
  }
}

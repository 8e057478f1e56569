package io.efscsi.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * The NFS mount command of the demo's node. Where the kernel has an NFS client it is the real
 * {@code mount -t nfs4}. Where it has none, a stand-in script that records the call, does what
 * mount.nfs4 does first over the wire (looks the root up through the proxy, with libnfs), then
 * bind-mounts the access point's directory of the demo's NFS server at the target; the pods' I/O
 * then goes through the proxy in user space ({@link DemoIo.UserSpace}).
 */
final class DemoStandIn {

  private final boolean kernel;
  private final Path script;
  private final Path log;

  private DemoStandIn(boolean kernel, Path script, Path log) {
    this.kernel = kernel;
    this.script = script;
    this.log = log;
  }

  /** Whether this kernel can mount NFSv4 (and we may: root). */
  static boolean kernelCanMountNfs() {
    try {
      return "root".equals(System.getProperty("user.name"))
          && Files.readString(Path.of("/proc/filesystems")).contains("\tnfs4\n");
    } catch (IOException e) {
      return false;
    }
  }

  static DemoStandIn choose(Path tmp) {
    return new DemoStandIn(
        kernelCanMountNfs(), tmp.resolve("stand-in-mount"), tmp.resolve("mounts.log"));
  }

  boolean kernel() {
    return kernel;
  }

  List<String> command() {
    return kernel ? List.of("mount", "-t", "nfs4") : List.of(script.toString());
  }

  String label() {
    return kernel
        ? "mount -t nfs4 (the kernel's NFS client)"
        : "STAND-IN (no NFS client in this kernel): root looked up through the proxy with"
            + " libnfs, then the server's directory bind-mounted";
  }

  /** Writes the stand-in for a volume whose root on the server is {@code directory}. */
  void prepare(Path directory) throws IOException {
    if (kernel) {
      return;
    }
    Files.writeString(
        script,
        """
        #!/bin/sh
        # efs-csi demo: stands in for 'mount -t nfs4 -o <options> <source> <target>'.
        echo "$*" >> '%s'
        port=$(echo "$2" | tr , '\\n' | sed -n 's/^port=//p')
        nfs-ls "nfs://127.0.0.1/?version=4&nfsport=$port" > /dev/null || exit 32
        exec mount --bind '%s' "$4"
        """
            .formatted(log, directory));
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
  }

  /**
   * The last mount call: options, source and target; with the kernel's client the mount table's
   * line for {@code target} (source, file system type and the options the kernel took).
   */
  String lastCall(Path target) throws IOException {
    if (kernel) {
      for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        String[] f = line.split(" ");
        int dash = List.of(f).indexOf("-");
        if (f.length > 4 && f[4].equals(target.toString()) && dash > 0 && dash + 3 < f.length) {
          return f[dash + 1] + " " + f[dash + 2] + " on " + f[4] + " " + f[dash + 3];
        }
      }
      return "(not in /proc/self/mountinfo)";
    }
    List<String> lines = Files.readAllLines(log);
    return lines.isEmpty() ? "(none)" : "mount -t nfs4 " + lines.getLast();
  }

  DemoIo io(int proxyPort, long uid, long gid, Path scratch) {
    return kernel ? new DemoIo.Kernel() : new DemoIo.UserSpace(proxyPort, uid, gid, scratch);
  }
}

package io.efscsi.it;

import io.efscsi.supervisor.host.ProcMountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the suites make on the host and remove again, so that a run leaves nothing behind
 * (scripts/test fails when it finds something new): temporary trees and the cgroup parents of
 * proxies.
 */
public final class HostCleanup {

  /** Where cgroups are: the v1 controllers the supervisor uses, and the v2 root. */
  static final List<Path> CGROUP_ROOTS =
      List.of(
          Path.of("/sys/fs/cgroup/memory"),
          Path.of("/sys/fs/cgroup/pids"),
          Path.of("/sys/fs/cgroup/unified"),
          Path.of("/sys/fs/cgroup"));

  private HostCleanup() {}

  /** The proxies' default cgroup parent, which a plugin started with default flags makes. */
  static final String DEFAULT_CGROUP_PARENT = "efs-csi";

  /** Whether {@code parent} is there under any cgroup root. */
  static boolean cgroupParentExists(String parent) {
    return CGROUP_ROOTS.stream().anyMatch(r -> Files.isDirectory(r.resolve(parent)));
  }

  /**
   * Removes the default cgroup parent when the test made it ({@code before}: whether it was there
   * when the test began); a plugin run with default flags makes it for its proxies.
   */
  static void removeDefaultCgroupParentIfNew(boolean before) throws IOException {
    if (!before && cgroupParentExists(DEFAULT_CGROUP_PARENT)) {
      removeCgroupParent(DEFAULT_CGROUP_PARENT);
    }
  }

  /**
   * Removes {@code parent} under every cgroup root, its (empty) children first. A group that still
   * holds a process stays, and says so.
   */
  public static void removeCgroupParent(String parent) throws IOException {
    List<Path> roots = new java.util.ArrayList<>(CGROUP_ROOTS);
    try (Stream<Path> all = Files.list(Path.of("/sys/fs/cgroup"))) {
      // on v1 a proxy leaves the plugin's group in every hierarchy (CgroupV1Placer)
      all.filter(r -> Files.exists(r.resolve("cgroup.procs")) && !roots.contains(r))
          .forEach(roots::add);
    }
    for (Path root : roots) {
      Path group = root.resolve(parent);
      if (!Files.isDirectory(group) || !Files.exists(group.resolve("cgroup.procs"))) {
        continue;
      }
      List<Path> dirs;
      try (Stream<Path> s = Files.walk(group)) {
        dirs = s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
      }
      for (Path d : dirs) {
        try {
          Files.delete(d); // rmdir: the kernel removes a cgroup's files with it
        } catch (IOException e) {
          throw new IOException("cannot remove the test's cgroup " + d + ": " + e, e);
        }
      }
    }
  }

  /**
   * Deletes a test's directory tree, never crossing into a mount (rm --one-file-system): what is
   * still mounted under it is unmounted lazily first.
   */
  public static void deleteTree(Path dir) throws IOException, InterruptedException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    String prefix = dir.toAbsolutePath() + "/";
    List<String> mounted =
        new ProcMountTable(ProcMountTable.SELF)
            .read().stream()
                .map(m -> m.mountPoint())
                .filter(p -> p.startsWith(prefix))
                .sorted(Comparator.reverseOrder())
                .toList();
    for (String m : mounted) {
      new ProcessBuilder("umount", "-l", m).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
    }
    Process rm =
        new ProcessBuilder("rm", "-rf", "--one-file-system", dir.toString()).inheritIO().start();
    if (!rm.waitFor(60, TimeUnit.SECONDS) || rm.exitValue() != 0 || Files.exists(dir)) {
      throw new IOException("cannot remove the test directory " + dir);
    }
  }
}

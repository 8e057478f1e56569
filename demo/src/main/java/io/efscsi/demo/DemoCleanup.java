package io.efscsi.demo;

import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Removes everything the demo made, whatever step it got to, once: the driver, proxies still in the
 * state records, mounts under the temporary directory, the mount target and its NFS server, the
 * emulator, the proxies' cgroup parent and the temporary directory. Runs at the end, when a step
 * fails and from the shutdown hook on Ctrl-C (SIGINT) or SIGTERM.
 */
final class DemoCleanup {

  private static final List<Path> CGROUP_ROOTS =
      List.of(
          Path.of("/sys/fs/cgroup/memory"),
          Path.of("/sys/fs/cgroup/pids"),
          Path.of("/sys/fs/cgroup/unified"),
          Path.of("/sys/fs/cgroup"));

  private final Path tmp;
  private final String cgroupParent;
  private final Deque<AutoCloseable> services = new ArrayDeque<>();
  private AutoCloseable driver;
  private boolean done;

  DemoCleanup(Path tmp, String cgroupParent) {
    this.tmp = tmp;
    this.cgroupParent = cgroupParent;
  }

  /** The driver: closed first, so that no proxy is restarted while they are stopped. */
  synchronized <T extends AutoCloseable> T driver(T d) {
    driver = d;
    return d;
  }

  /** Something to close; closed in reverse order, after the driver's proxies are stopped. */
  synchronized <T extends AutoCloseable> T add(T service) {
    services.push(service);
    return service;
  }

  /** What it removed, one phrase each; nothing on a second call. */
  synchronized List<String> run() {
    List<String> did = new ArrayList<>();
    if (done) {
      return did;
    }
    done = true;
    // The driver first (it would restart a proxy killed under it), but not the NFS server yet.
    closeQuietly(driver);
    int proxies = stopProxies();
    did.add(proxies + " proxies stopped");
    int mounts = unmountUnderTmp();
    did.add(mounts + " mounts removed");
    while (!services.isEmpty()) {
      closeQuietly(services.pop());
    }
    if (removeCgroupParent()) {
      did.add("cgroup " + cgroupParent + " removed");
    }
    try {
      Process rm =
          new ProcessBuilder("rm", "-rf", "--one-file-system", tmp.toString())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      rm.waitFor(60, TimeUnit.SECONDS);
    } catch (IOException | InterruptedException e) {
      did.add("could not remove " + tmp + ": " + e.getMessage());
    }
    did.add(Files.exists(tmp) ? tmp + " NOT removed" : tmp + " removed");
    return did;
  }

  private int stopProxies() {
    Path state = tmp.resolve("state");
    if (!Files.isDirectory(state)) {
      return 0;
    }
    int n = 0;
    try {
      for (ProxyRecord r : new StateStore(state).list()) {
        var p = ProcessHandle.of(r.pid());
        if (r.pid() > 0 && p.isPresent()) {
          p.get().destroyForcibly();
          p.get().onExit().get(10, TimeUnit.SECONDS);
          n++;
        }
      }
    } catch (Exception e) {
      // best effort: mounts and the directory still go
    }
    return n;
  }

  private int unmountUnderTmp() {
    String prefix = tmp + "/";
    int n = 0;
    try {
      List<String> points =
          new ProcMountTable(ProcMountTable.SELF)
              .read().stream()
                  .map(MountInfo::mountPoint)
                  .filter(m -> m.startsWith(prefix))
                  .sorted(Comparator.reverseOrder())
                  .toList();
      for (String m : points) {
        Process p =
            new ProcessBuilder("umount", "-l", m)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        p.waitFor(30, TimeUnit.SECONDS);
        n++;
      }
    } catch (IOException | InterruptedException e) {
      // best effort
    }
    return n;
  }

  private boolean removeCgroupParent() {
    boolean removed = false;
    List<Path> roots = new java.util.ArrayList<>(CGROUP_ROOTS);
    try (Stream<Path> all = Files.list(Path.of("/sys/fs/cgroup"))) {
      // on v1 a proxy has a group in every hierarchy (CgroupV1Placer)
      all.filter(r -> Files.exists(r.resolve("cgroup.procs")) && !roots.contains(r))
          .forEach(roots::add);
    } catch (IOException e) {
      // no cgroup file system: nothing more to remove
    }
    for (Path root : roots) {
      Path group = root.resolve(cgroupParent);
      if (!Files.isDirectory(group) || !Files.exists(group.resolve("cgroup.procs"))) {
        continue;
      }
      try (Stream<Path> s = Files.walk(group)) {
        for (Path d : s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(d); // rmdir: the kernel removes a cgroup's files with it
        }
        removed = true;
      } catch (IOException e) {
        // a group still holding a process stays; the leftover check names it
      }
    }
    return removed;
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (Exception e) {
      // best effort
    }
  }
}

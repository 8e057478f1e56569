package io.efscsi.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * What the node DaemonSet leaves on the host that the cluster's own directory does not hold: the
 * efs-utils directories its hostPaths create (removed when they were not there before the suite),
 * proxies that outlive every container by design (stopped), and their cgroup parent.
 */
final class ClusterHostPaths {

  static final String CGROUP_PARENT = "efs-csi-cluster-proxies";
  static final List<Path> CREATED_BY_THE_CHART =
      List.of(Path.of("/var/run/efs"), Path.of("/var/amazon/efs"), Path.of("/etc/amazon/efs"));

  /** Which of those existed when the suite began ({@link #recordBefore}). */
  private static Map<Path, Boolean> before = Map.of();

  /** Notes which of the chart's host directories are there before the suite installs it. */
  static void recordBefore() {
    before = CREATED_BY_THE_CHART.stream().collect(Collectors.toMap(p -> p, Files::exists));
  }

  private ClusterHostPaths() {}

  /** Stops proxies whose state is under {@code work}, removes their cgroups and new host dirs. */
  static void cleanUp(Path work) throws Exception {
    if (work != null) {
      for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
        String cmd = p.info().commandLine().orElse("");
        if (cmd.contains("io.efscsi.") && cmd.contains(work.toString())) {
          p.destroyForcibly();
          p.onExit().get(10, TimeUnit.SECONDS);
        }
      }
    }
    if (work == null) {
      // the cluster is gone: no plugin restarts a proxy now; stop any a class left (a class whose
      // close failed before it stopped its own), as scripts/cluster-down does
      for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
        String cmd = p.info().commandLine().orElse("");
        if (cmd.contains("io.efscsi.proxy.ProxyMain") && cmd.contains("efscsi-cluster-driver")) {
          p.destroyForcibly();
          p.onExit().get(10, TimeUnit.SECONDS);
        }
      }
    }
    HostCleanup.removeCgroupParent(CGROUP_PARENT);
    for (Path p : CREATED_BY_THE_CHART) {
      if (!before.getOrDefault(p, true) && Files.isDirectory(p)) {
        delete(p);
      }
    }
  }

  private static void delete(Path dir) throws IOException {
    try (var s = Files.walk(dir)) {
      for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
    Path parent = dir.getParent();
    if (parent.getFileName().toString().equals("amazon")) {
      try (var s = Files.list(parent)) {
        if (s.findAny().isEmpty()) {
          Files.delete(parent);
        }
      }
    }
  }
}

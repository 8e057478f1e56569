package io.efscsi.supervisor.cgroup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the cgroup adapter. {@code auto}: cgroup v2 when the unified hierarchy at the root has
 * the memory controller, else v1 when the memory and pids hierarchies are writable, else a systemd
 * scope when the host's systemd is reachable, else none (loudly).
 */
public final class CgroupDetector {

  private static final Logger LOG = LoggerFactory.getLogger(CgroupDetector.class);

  /** The adapter names accepted by {@code --proxy-cgroup}. */
  public static final List<String> MODES = List.of("auto", "v2", "v1", "systemd", "none");

  private CgroupDetector() {}

  /**
   * @param mode one of {@link #MODES}
   * @param root where cgroupfs is mounted ({@code /sys/fs/cgroup})
   * @param parent the parent group for cgroupfs adapters, or the slice for systemd
   * @param systemdRun the systemd-run binary
   * @param systemdRuntime the directory that exists when systemd runs ({@code /run/systemd/system})
   */
  public static CgroupPlacer choose(
      String mode, Path root, String parent, String systemdRun, Path systemdRuntime) {
    CgroupPlacer p =
        switch (mode.toLowerCase(Locale.ROOT)) {
          case "v2" -> new CgroupV2Placer(root, parent);
          case "v1" -> new CgroupV1Placer(root, parent);
          case "systemd" -> new SystemdScopePlacer(systemdRun, slice(parent), root);
          case "none" -> new NoCgroupPlacer("--proxy-cgroup=none");
          case "auto" -> detect(root, parent, systemdRun, systemdRuntime);
          default ->
              throw new IllegalArgumentException(
                  "proxy cgroup mode must be one of " + MODES + ", got '" + mode + "'");
        };
    LOG.info("proxies are placed with the '{}' cgroup adapter (mode {})", p.kind(), mode);
    return p;
  }

  /**
   * The group a state record describes ({@code v1:…}, {@code v2:…}, {@code systemd:…}), for reading
   * its counters from outside the supervisor ({@code efs-csi status}); creates nothing.
   */
  public static Placement described(Path root, String described) {
    String kind = described.indexOf(':') < 0 ? "" : described.substring(0, described.indexOf(':'));
    CgroupPlacer p =
        switch (kind) {
          case "v2" -> new CgroupV2Placer(root, "efs-csi");
          case "v1" -> new CgroupV1Placer(root, "efs-csi");
          case "systemd" -> new SystemdScopePlacer("systemd-run", "efs-csi.slice", root);
          default -> null;
        };
    if (p != null) {
      return p.existing(described);
    }
    return new Placement() {
      @Override
      public String describe() {
        return described;
      }

      @Override
      public long oomKills() {
        return -1;
      }

      @Override
      public void remove() {}
    };
  }

  private static CgroupPlacer detect(
      Path root, String parent, String systemdRun, Path systemdRuntime) {
    Path controllers = root.resolve("cgroup.controllers");
    if (Files.isRegularFile(controllers) && hasMemory(controllers)) {
      return new CgroupV2Placer(root, parent);
    }
    if (Files.isWritable(root.resolve("memory")) && Files.isWritable(root.resolve("pids"))) {
      return new CgroupV1Placer(root, parent);
    }
    if (Files.isDirectory(systemdRuntime) && onPath(systemdRun)) {
      return new SystemdScopePlacer(systemdRun, slice(parent), root);
    }
    return new NoCgroupPlacer(
        "no writable cgroup v2 or v1 memory/pids hierarchy under " + root + " and no systemd");
  }

  private static boolean hasMemory(Path controllers) {
    try {
      return List.of(Files.readString(controllers, StandardCharsets.US_ASCII).trim().split("\\s+"))
          .contains("memory");
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean onPath(String binary) {
    if (binary.contains("/")) {
      return Files.isExecutable(Path.of(binary));
    }
    String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
    for (String dir : path.split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, binary))) {
        return true;
      }
    }
    return false;
  }

  private static String slice(String parent) {
    return parent.endsWith(".slice") ? parent : parent.replace('/', '-') + ".slice";
  }
}

package io.efscsi.node;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import io.efscsi.supervisor.SupervisorConfig;
import io.efscsi.supervisor.Supervisors;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The node's proxy-supervision flags (ours; the Go driver had none: efs-utils' watchdog used a
 * fixed port range from its config file).
 *
 * @param config the supervisor's settings
 * @param cgroupMode auto, v2, v1, systemd or none
 * @param cgroupRoot where cgroupfs is mounted
 * @param cgroupParent the parent cgroup (or systemd slice) of every proxy's group
 */
public record SupervisorOptions(
    SupervisorConfig config, String cgroupMode, Path cgroupRoot, String cgroupParent) {

  public static final List<Flag> FLAGS =
      List.of(
          Flag.string(
              "proxy-port-range", "20049-21049", "127.0.0.1 ports for the proxies, lower-upper"),
          Flag.string(
              "proxy-cgroup", "auto", "cgroup adapter for proxies: auto, v2, v1, systemd or none"),
          Flag.string(
              "proxy-cgroup-root", "/sys/fs/cgroup", "where the host's cgroupfs is mounted"),
          Flag.string(
              "proxy-cgroup-parent",
              "efs-csi",
              "parent cgroup of the proxies (outside the plugin container's own), or systemd slice"),
          Flag.string(
              "proxy-memory-limit", "256Mi", "memory limit of each proxy's cgroup (0 = none)"),
          Flag.integer("proxy-pids-limit", 64, "task limit of each proxy's cgroup (0 = none)"),
          Flag.duration(
              "reconcile-interval", "5s", "how often proxies are matched to the mount table"),
          Flag.duration(
              "mount-absent-grace",
              "60s",
              "how long a proxy's mount may be missing from the mount table before the proxy goes"),
          Flag.duration(
              "proxy-health-interval", "10s", "how often each proxy and its upstream are checked"),
          Flag.duration(
              "proxy-start-timeout",
              "60s",
              "how long a starting proxy may take to answer before it is killed and retried"),
          Flag.string(
              "proxy-upgrade",
              "rolling",
              "rolling: move proxies of another release to this one on their ports, one at a"
                  + " time; never: keep each on its release until its volume is unstaged"),
          Flag.duration(
              "proxy-upgrade-delay",
              "60s",
              "how long after the plugin starts the first proxy is moved to its release"),
          Flag.duration("proxy-upgrade-interval", "10s", "the pause between two proxy moves"));

  /** Where the proxies' cgroups go, as the supervisor takes it. */
  public Supervisors.Cgroups cgroups() {
    return new Supervisors.Cgroups(cgroupMode, cgroupRoot, cgroupParent);
  }

  /** Defaults for a state dir (the demo and tests). */
  public static SupervisorOptions defaults(Path stateDir) {
    return new SupervisorOptions(
        SupervisorConfig.defaults(stateDir), "auto", Path.of("/sys/fs/cgroup"), "efs-csi");
  }

  static SupervisorOptions from(Flags flags, Path stateDir) throws UsageException {
    String range = flags.string("proxy-port-range").strip();
    String[] lu = range.split("-");
    int lower;
    int upper;
    try {
      if (lu.length != 2) {
        throw new NumberFormatException();
      }
      lower = Integer.parseInt(lu[0].strip());
      upper = Integer.parseInt(lu[1].strip());
    } catch (NumberFormatException e) {
      throw invalid(range, "proxy-port-range", "lower-upper, e.g. 20049-21049");
    }
    if (lower < 1024 || upper > 65535 || lower > upper) {
      throw invalid(range, "proxy-port-range", "ports 1024-65535 with lower <= upper");
    }
    String mode = flags.string("proxy-cgroup").strip().toLowerCase(Locale.ROOT);
    if (!Supervisors.Cgroups.MODES.contains(mode)) {
      throw invalid(mode, "proxy-cgroup", "one of " + String.join(", ", Supervisors.Cgroups.MODES));
    }
    String parent = flags.string("proxy-cgroup-parent").strip();
    if (!parent.matches("[A-Za-z0-9._/-]+") || parent.contains("..") || parent.startsWith("/")) {
      throw invalid(parent, "proxy-cgroup-parent", "a relative cgroup path without '..'");
    }
    long memory = quantity(flags.string("proxy-memory-limit"));
    if (memory != 0 && memory < (32L << 20)) {
      throw invalid(
          flags.string("proxy-memory-limit"),
          "proxy-memory-limit",
          "0 or at least 32Mi (a proxy needs ~50Mi)");
    }
    long pids = flags.integer("proxy-pids-limit");
    if (pids < 0 || (pids > 0 && pids < 16) || pids > 4096) {
      throw invalid(Long.toString(pids), "proxy-pids-limit", "0 or 16-4096");
    }
    Duration reconcile = positive(flags, "reconcile-interval");
    Duration grace = positive(flags, "mount-absent-grace");
    Duration health = positive(flags, "proxy-health-interval");
    Duration startTimeout = positive(flags, "proxy-start-timeout");
    String upgrade = flags.string("proxy-upgrade").strip().toLowerCase(Locale.ROOT);
    if (!upgrade.equals("rolling") && !upgrade.equals("never")) {
      throw invalid(flags.string("proxy-upgrade"), "proxy-upgrade", "rolling or never");
    }
    Duration upgradeDelay = flags.duration("proxy-upgrade-delay");
    if (upgradeDelay.isNegative()) {
      throw invalid(flags.string("proxy-upgrade-delay"), "proxy-upgrade-delay", "0s or more");
    }
    Duration upgradeInterval = positive(flags, "proxy-upgrade-interval");
    SupervisorConfig.Upgrades upgrades =
        new SupervisorConfig.Upgrades(upgrade.equals("rolling"), upgradeDelay, upgradeInterval);
    SupervisorConfig d = SupervisorConfig.defaults(stateDir);
    SupervisorConfig c =
        d.withPorts(lower, upper)
            .withLimits(memory, (int) pids)
            .withTimings(reconcile, grace, d.absentReads(), health)
            .withStartTimeout(startTimeout)
            .with(b -> b.upgrades = upgrades);
    return new SupervisorOptions(
        c, mode, Path.of(flags.string("proxy-cgroup-root").strip()), parent);
  }

  /** Kubernetes-style quantities: 256Mi, 1Gi, 512Ki, 100M, or plain bytes. */
  static long quantity(String raw) throws UsageException {
    String v = raw.strip();
    long mult = 1;
    String[][] units = {
      {"Ki", "1024"},
      {"Mi", "1048576"},
      {"Gi", "1073741824"},
      {"K", "1000"},
      {"M", "1000000"},
      {"G", "1000000000"}
    };
    for (String[] u : units) {
      if (v.endsWith(u[0])) {
        mult = Long.parseLong(u[1]);
        v = v.substring(0, v.length() - u[0].length());
        break;
      }
    }
    try {
      long n = Long.parseLong(v);
      if (n < 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(n, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw invalid(raw, "proxy-memory-limit", "a byte quantity such as 256Mi, 1Gi or 0");
    }
  }

  private static Duration positive(Flags flags, String name) throws UsageException {
    Duration d = flags.duration(name);
    if (!d.isPositive()) {
      throw invalid(flags.string(name), name, "a duration greater than 0s");
    }
    return d;
  }

  private static UsageException invalid(String value, String flag, String expected) {
    return new UsageException(
        "invalid value '" + value + "' for flag '--" + flag + "': expected " + expected);
  }
}

package io.efscsi.node;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;

/**
 * Node settings: the Go driver's node flags (so its DaemonSet args keep working) plus our state
 * directory. Flags that only configured efs-utils are accepted and documented as having no effect
 * (docs/differences.md): our proxy replaces efs-utils.
 *
 * @param stateDir where proxy records, control sockets and proxy logs live (a hostPath)
 * @param kubeletRootDir the kubelet's root directory: every staging, target and volume path must
 *     lie below it once symbolic links are resolved ({@link io.efscsi.node.paths.PathConfinement})
 * @param volMetricsOptIn advertise GET_VOLUME_STATS
 * @param volMetricsRefreshPeriod how long a usage walk result is cached
 * @param volMetricsFsRateLimit concurrent usage walks per file system
 * @param maxInflightMountCalls limit of concurrent mount calls when opted in
 * @param volumeAttachLimit MaxVolumesPerNode when opted in
 * @param forceUnmountAfterTimeout force unmount when a normal unmount times out
 * @param unmountTimeout how long a normal unmount may take
 * @param supervisor how proxies are supervised (ports, cgroups, reconcile timings)
 * @param nfsMountCommand the command that mounts NFS ({@code mount -t nfs4}); {@code -o <options>
 *     <source> <target>} are appended
 * @param mountTargetPort the NFS port of the mount targets (2049)
 * @param mountDefaults the NFS options every mount starts from ({@code --nfs-mount-options})
 * @param takeover taking over the Go driver's mounts (docs/migration.md)
 */
public record NodeOptions(
    Path stateDir,
    Path kubeletRootDir,
    boolean volMetricsOptIn,
    Duration volMetricsRefreshPeriod,
    int volMetricsFsRateLimit,
    OptionalInt maxInflightMountCalls,
    OptionalInt volumeAttachLimit,
    boolean forceUnmountAfterTimeout,
    Duration unmountTimeout,
    SupervisorOptions supervisor,
    List<String> nfsMountCommand,
    int mountTargetPort,
    io.efscsi.node.volume.MountDefaults mountDefaults,
    io.efscsi.node.takeover.TakeoverOptions takeover) {

  public static final String DEFAULT_STATE_DIR = "/var/run/efs-csi";
  public static final String DEFAULT_KUBELET_ROOT_DIR = "/var/lib/kubelet";

  /** The Go driver's node flags, and ours that belong with them. */
  private static final List<Flag> GO_FLAGS =
      List.of(
          Flag.string(
              "state-dir",
              DEFAULT_STATE_DIR,
              "directory for proxy state records, control sockets and proxy logs"),
          Flag.bool("vol-metrics-opt-in", false, "advertise and serve NodeGetVolumeStats"),
          Flag.number("vol-metrics-refresh-period", 240, "minutes a volume usage result is cached"),
          Flag.integer("vol-metrics-fs-rate-limit", 5, "concurrent usage walks per file system"),
          Flag.bool("max-inflight-mount-calls-opt-in", false, "limit concurrent mount calls"),
          Flag.integer(
              "max-inflight-mount-calls", -1, "the limit of concurrent mount calls when opted in"),
          Flag.bool(
              "volume-attach-limit-opt-in", false, "report a volume attach limit in NodeGetInfo"),
          Flag.integer("volume-attach-limit", -1, "MaxVolumesPerNode when opted in"),
          Flag.bool(
              "force-unmount-after-timeout",
              false,
              "force unmount when a normal unmount times out"),
          Flag.duration("unmount-timeout", "30s", "how long a normal unmount may take"),
          Flag.string(
              "efs-utils-config-dir-path",
              "/var/amazon/efs",
              "where the host's /var/amazon/efs is mounted (read-only): efs-utils' key, for"
                  + " taking over the Go driver's mounts"),
          Flag.string(
              "efs-utils-config-legacy-dir-path",
              "/etc/amazon/efs-legacy",
              "where the host's /etc/amazon/efs is mounted (read-only): efs-utils' key, for"
                  + " taking over the Go driver's mounts"),
          Flag.string(
              "efs-utils-static-files-path",
              "/etc/amazon/efs-static-files/",
              "accepted for compatibility; no effect (no efs-utils)"),
          Flag.string(
              "efs-utils-conf-overrides",
              "",
              "accepted for compatibility; no effect (no efs-utils)"),
          Flag.string(
              "s3files-utils-conf-overrides",
              "",
              "accepted for compatibility; no effect (S3 Files volumes are mounted through our"
                  + " proxy, which reads no s3files-utils.conf)"),
          Flag.bool(
              "efs-cloudwatch-log-enabled",
              false,
              "accepted for compatibility; no effect (no efs-utils)"),
          Flag.bool(
              "s3files-cloudwatch-log-enabled",
              true,
              "accepted for compatibility; no effect (our proxy sends no logs to CloudWatch; its"
                  + " log is in the state dir)"),
          Flag.bool(
              "s3files-cloudwatch-metrics-enabled",
              true,
              "accepted for compatibility; no effect (our proxy publishes no CloudWatch metrics;"
                  + " the node's Prometheus metrics cover each mount)"));

  /** Node flags of ours that are not about proxy supervision. */
  private static final List<Flag> OWN_FLAGS =
      List.of(
          Flag.string(
              "kubelet-root-dir",
              DEFAULT_KUBELET_ROOT_DIR,
              "the kubelet's root directory (the chart's node.kubeletPath): staging, target and"
                  + " volume paths outside it, once symbolic links are resolved, are refused"),
          Flag.string(
              "nfs-mount-command",
              "mount -t nfs4",
              "the command that mounts NFS (space-separated; '-o opts source target' appended);"
                  + " changed only for testing on machines without an NFS client"),
          Flag.integer("mount-target-port", 2049, "the NFS port of the EFS mount targets"));

  /** Every node flag: the Go driver's, ours, then the proxy supervision ones. */
  public static final List<Flag> FLAGS =
      java.util.stream.Stream.of(
              GO_FLAGS,
              OWN_FLAGS,
              io.efscsi.node.volume.MountDefaults.FLAGS,
              io.efscsi.node.takeover.TakeoverOptions.FLAGS,
              SupervisorOptions.FLAGS)
          .flatMap(List::stream)
          .toList();

  public static NodeOptions from(Flags flags) throws UsageException {
    Path stateDir = Path.of(flags.string("state-dir").strip());
    if (!stateDir.isAbsolute()) {
      throw new UsageException(
          "invalid value '" + stateDir + "' for flag '--state-dir': expected an absolute path");
    }
    Path kubeletRootDir = kubeletRootDir(flags.string("kubelet-root-dir"));
    double refresh = flags.number("vol-metrics-refresh-period");
    if (!(refresh > 0)) {
      throw new UsageException(
          "invalid value '"
              + flags.string("vol-metrics-refresh-period")
              + "' for flag '--vol-metrics-refresh-period': expected minutes greater than 0");
    }
    long rate = flags.integer("vol-metrics-fs-rate-limit");
    if (rate < 1 || rate > 1000) {
      throw new UsageException(
          "invalid value '" + rate + "' for flag '--vol-metrics-fs-rate-limit': expected 1-1000");
    }
    OptionalInt inflight = optIn(flags, "max-inflight-mount-calls");
    OptionalInt attach = optIn(flags, "volume-attach-limit");
    Duration unmount = flags.duration("unmount-timeout");
    if (!unmount.isPositive()) {
      throw new UsageException(
          "invalid value '"
              + flags.string("unmount-timeout")
              + "' for flag '--unmount-timeout': expected a duration greater than 0s");
    }
    return new NodeOptions(
        stateDir,
        kubeletRootDir,
        flags.bool("vol-metrics-opt-in"),
        Duration.ofMillis((long) (refresh * 60_000)),
        (int) rate,
        inflight,
        attach,
        flags.bool("force-unmount-after-timeout"),
        unmount,
        SupervisorOptions.from(flags, stateDir),
        mountCommand(flags.string("nfs-mount-command")),
        port(flags.integer("mount-target-port")),
        io.efscsi.node.volume.MountDefaults.from(flags),
        io.efscsi.node.takeover.TakeoverOptions.from(flags));
  }

  /** Absolute and not {@code /} itself (that would confine nothing); normalised. */
  private static Path kubeletRootDir(String raw) throws UsageException {
    Path p = Path.of(raw.strip()).normalize();
    if (!p.isAbsolute() || p.getParent() == null) {
      throw new UsageException(
          "invalid value '"
              + raw
              + "' for flag '--kubelet-root-dir': expected an absolute path below /, such as "
              + DEFAULT_KUBELET_ROOT_DIR);
    }
    return p;
  }

  private static List<String> mountCommand(String raw) throws UsageException {
    List<String> words = List.of(raw.strip().split("\\s+"));
    if (raw.isBlank()) {
      throw new UsageException(
          "invalid value '' for flag '--nfs-mount-command': expected a command such as 'mount -t nfs4'");
    }
    return words;
  }

  private static int port(long p) throws UsageException {
    if (p < 1 || p > 65535) {
      throw new UsageException(
          "invalid value '" + p + "' for flag '--mount-target-port': expected a port 1-65535");
    }
    return (int) p;
  }

  /** The Go driver's rule: an opt-in needs a positive value. */
  private static OptionalInt optIn(Flags flags, String name) throws UsageException {
    if (!flags.bool(name + "-opt-in")) {
      return OptionalInt.empty();
    }
    long v = flags.integer(name);
    if (v <= 0 || v > Integer.MAX_VALUE) {
      throw new UsageException(
          "flag '--"
              + name
              + "-opt-in' needs '--"
              + name
              + "' greater than 0, got "
              + flags.string(name));
    }
    return OptionalInt.of((int) v);
  }
}

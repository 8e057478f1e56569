package io.efscsi.node.stats;

import io.efscsi.common.error.DriverException;
import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPoints;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * NodeGetVolumeStats: usage from statfs (bounded), and the VOLUME_CONDITION of the volume's proxy
 * (abnormal while it is down, crash-looping or cannot reach its mount target). The proxy is found
 * through the mount table: a bind mount of an NFS mount carries the same {@code port=}.
 */
public final class VolumeHealth {

  /** What NodeGetVolumeStats reports. */
  public record Report(Optional<VolumeStats.Usage> usage, boolean abnormal, String message) {}

  private final MountPoints mounts;
  private final Supplier<ProxySupervisor> supervisors;
  private final VolumeStats stats;
  private final Optional<UsageWalks> walks;

  public VolumeHealth(
      MountPoints mounts,
      Supplier<ProxySupervisor> supervisors,
      VolumeStats stats,
      Optional<UsageWalks> walks) {
    this.mounts = mounts;
    this.supervisors = supervisors;
    this.stats = stats;
    this.walks = walks;
  }

  public Report report(String volumeId, Path volumePath) throws IOException {
    Optional<MountInfo> m = mounts.at(volumePath);
    if (m.isEmpty()) {
      throw DriverException.notFound("volume %s is not mounted at %s", volumeId, volumePath);
    }
    OptionalInt port = m.get().loopbackPort();
    Optional<ProxyStatus> proxy =
        port.isPresent()
            ? supervisors.get().status().stream()
                .filter(s -> s.port() == port.getAsInt())
                .findFirst()
            : Optional.empty();
    String problem = proxy.map(VolumeHealth::problem).orElse(null);
    if (port.isPresent() && proxy.isEmpty()) {
      problem = "no proxy of this node serves its port " + port.getAsInt();
    }
    Optional<VolumeStats.Usage> usage = Optional.empty();
    if (problem == null) {
      try {
        usage = Optional.of(withWalk(volumeId, volumePath, stats.of(volumePath)));
      } catch (DriverException e) {
        problem = e.getMessage();
      }
    }
    return problem == null
        ? new Report(usage, false, "volume is healthy")
        : new Report(usage, true, problem);
  }

  /** Drops what is cached for a volume that is no longer staged. */
  public void forget(String volumeId) {
    walks.ifPresent(w -> w.forget(volumeId));
  }

  /** The walk's used bytes in place of statfs's, when the usage walk is opted in and has run. */
  private VolumeStats.Usage withWalk(String volumeId, Path path, VolumeStats.Usage u) {
    if (walks.isEmpty()) {
      return u;
    }
    String fs;
    try {
      fs = io.efscsi.node.volume.VolumeHandle.parse(volumeId).fileSystemId();
    } catch (DriverException e) {
      fs = volumeId;
    }
    OptionalLong used = walks.get().usedBytes(volumeId, fs, path);
    return used.isEmpty()
        ? u
        : new VolumeStats.Usage(
            u.totalBytes(), u.availableBytes(), used.getAsLong(), u.totalInodes(), u.freeInodes());
  }

  private static String problem(ProxyStatus s) {
    if (s.crashLooping()) {
      return "the volume's proxy (port "
          + s.port()
          + ") is crash-looping; last exit: "
          + s.lastExit().orElse("?");
    }
    if (s.state() != ProxyStatus.State.RUNNING) {
      return "the volume's proxy (port "
          + s.port()
          + ") is "
          + s.state().name().toLowerCase(java.util.Locale.ROOT)
          + s.lastExit().map(e -> "; last exit: " + e).orElse("");
    }
    if (s.targetUnreachableSince().isPresent()) {
      return "the volume's mount target is unreachable from this node since "
          + s.targetUnreachableSince().get()
          + " (neither its proxy on port "
          + s.port()
          + " nor the driver's own probe reaches it); I/O fails or waits until it answers";
    }
    if (!s.upstreamHealthy()) {
      return "the volume's proxy (port " + s.port() + ") cannot reach the mount target";
    }
    return null;
  }
}

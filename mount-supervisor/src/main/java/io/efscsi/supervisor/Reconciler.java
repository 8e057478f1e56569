package io.efscsi.supervisor;

import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPresence;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.Unmounter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Matches the mount table against the supervised proxies with {@link Decision#decide}. It reads
 * only {@code /proc/self/mountinfo} (never a mount point), and it acts only on ports it owns: a
 * loopback mount on a port without a record is left alone (the port allocator keeps away from it).
 * A failed read of the table changes nothing.
 */
public final class Reconciler {

  private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

  /** What one pass did. */
  public record Report(Map<Decision, Integer> decisions, int mounts, long nanos) {}

  private final ProxyContext ctx;
  private final MountTable mountTable;
  private final MountPresence presence;
  private final Unmounter unmounter;
  private final ProxyContext.Fleet fleet;

  Reconciler(
      ProxyContext ctx,
      MountTable mountTable,
      MountPresence presence,
      Unmounter unmounter,
      ProxyContext.Fleet fleet) {
    this.ctx = ctx;
    this.mountTable = mountTable;
    this.presence = presence;
    this.unmounter = unmounter;
    this.fleet = fleet;
  }

  /** One pass; serialised (the periodic pass and an on-demand one never interleave). */
  public synchronized Report pass() throws IOException {
    long t0 = System.nanoTime();
    List<MountInfo> table = mountTable.read();
    presence.observe(table);
    Map<Decision, Integer> counts = new EnumMap<>(Decision.class);
    List<Supervised> all = fleet.all();
    java.util.Set<String> users = new java.util.HashSet<>();
    all.forEach(s -> users.addAll(s.record().users()));
    for (Supervised s : all) {
      s.rotateLog();
      MountPresence.State mount = presence.state(s.port());
      Decision d = Decision.decide(s.upOrRestarting(), mount, wanted(s, presence, users));
      counts.merge(d, 1, Integer::sum);
      apply(s, d, presence.mounts(s.port()));
    }
    long nanos = System.nanoTime() - t0;
    ctx.stats().reconcilePasses.incrementAndGet();
    ctx.stats().lastReconcileNanos.set(nanos);
    return new Report(counts, table.size(), nanos);
  }

  /**
   * Wanted by its own users, or by a mount on its port that is another proxy's user: the kernel
   * merges NFS clients of one server reached through two local ports (trunking detection), so a
   * volume staged through proxy B can end up on proxy A's port. Such a mount is never an orphan.
   */
  private static boolean wanted(Supervised s, MountPresence presence, java.util.Set<String> users) {
    return s.record().wanted()
        || presence.mounts(s.port()).stream().anyMatch(m -> users.contains(m.mountPoint()));
  }

  private void apply(Supervised s, Decision d, List<MountInfo> mounts) {
    int port = s.port();
    switch (d) {
      case NOTHING -> {}
      case RESTART -> {
        LOG.warn("proxy for port {} is down while its mount is in use; restarting it", port);
        s.restartNow("down while its mount is present");
      }
      case UNMOUNT_THEN_RELEASE -> unmountThenRelease(s, mounts);
      case STOP_AND_RELEASE -> {
        LOG.info("proxy for port {} has had no mount for the grace period; stopping it", port);
        s.stop();
        fleet.forget(s);
      }
      case RELEASE -> {
        LOG.info("proxy for port {} is down and has no mount; releasing the port", port);
        fleet.forget(s);
      }
    }
  }

  /** Lazy-unmounts every loopback mount on the port; the port goes only once all are gone. */
  private void unmountThenRelease(Supervised s, List<MountInfo> mounts) {
    int port = s.port();
    for (MountInfo m : mounts) {
      try {
        unmounter.lazyUnmount(Path.of(m.mountPoint()));
      } catch (IOException e) {
        // umount's exit status is not the truth: the fresh read of the mount table below is
        LOG.warn(
            "umount -l of orphan {} on port {} reported: {}", m.mountPoint(), port, e.getMessage());
      }
    }
    List<MountInfo> left;
    try {
      left = MountPresence.byPort(mountTable.read()).getOrDefault(port, List.of());
    } catch (IOException e) {
      LOG.error("cannot re-read the mount table; port {} stays held: {}", port, e.getMessage());
      return;
    }
    List<String> gone = new ArrayList<>();
    for (MountInfo m : mounts) {
      if (left.stream().noneMatch(l -> l.mountPoint().equals(m.mountPoint()))) {
        gone.add(m.mountPoint());
        LOG.warn(
            "orphaned mount {} on 127.0.0.1:{} (proxy gone, nobody wants it) lazily unmounted",
            m.mountPoint(),
            port);
      }
    }
    ctx.stats().orphanUnmounts.addAndGet(gone.size());
    if (!gone.isEmpty()) {
      ctx.listener().orphanUnmounted(port, gone);
    }
    if (!left.isEmpty()) {
      LOG.error(
          "port {} still carries {} mount(s) after umount -l; kept until they are gone",
          port,
          left.size());
      return;
    }
    fleet.forget(s);
  }
}

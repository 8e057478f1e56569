package io.efscsi.node.metrics;

import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.SupervisorStats;
import io.efscsi.supervisor.host.MountTable;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The supervisor's counters and proxy states on the node's /metrics, and the per-volume ones
 * ({@link VolumeMetrics}, {@link NfsClientMetrics}, refreshed in the background until closed).
 * docs/metrics.md lists them.
 */
public final class SupervisorMetrics {

  private static final Logger LOG = LoggerFactory.getLogger(SupervisorMetrics.class);

  /** How often the per-volume numbers are gathered (a typical scrape interval). */
  public static final Duration REFRESH = Duration.ofSeconds(15);

  private SupervisorMetrics() {}

  /**
   * Binds everything; the per-volume metrics (the proxies' and the kernel NFS client's) refresh now
   * and then every {@link #REFRESH} in the background until the returned refresher is closed.
   */
  public static Refresher bind(ProxySupervisor s, MountTable table, MeterRegistry r) {
    return bind(s, table, r, NfsClientMetrics.Source.of(s::status));
  }

  /**
   * As {@link #bind(ProxySupervisor, MountTable, MeterRegistry)}, the mountstats from {@code nfs}.
   */
  public static Refresher bind(
      ProxySupervisor s, MountTable table, MeterRegistry r, NfsClientMetrics.Source nfs) {
    bindCounters(s, r);
    VolumeMetrics volumes = new VolumeMetrics(VolumeMetrics.Source.of(s, table), r);
    NfsClientMetrics clients = new NfsClientMetrics(nfs, r);
    return new Refresher(List.of(volumes::refresh, clients::refresh)).start(REFRESH);
  }

  /** Refreshes its parts in order, once now and then in the background; each part on its own. */
  public static final class Refresher implements AutoCloseable {
    private final List<Runnable> parts;
    private ScheduledExecutorService timer;

    Refresher(List<Runnable> parts) {
      this.parts = List.copyOf(parts);
    }

    Refresher start(Duration every) {
      refresh();
      timer =
          Executors.newSingleThreadScheduledExecutor(
              Thread.ofPlatform().name("volume-metrics").daemon().factory());
      timer.scheduleWithFixedDelay(
          this::refresh, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
      return this;
    }

    /** One refresh of every part; a part that fails is logged and the others still run. */
    public void refresh() {
      for (Runnable part : parts) {
        try {
          part.run();
        } catch (RuntimeException e) {
          LOG.warn("volume metrics refresh failed: {}", e.toString());
        }
      }
    }

    @Override
    public void close() {
      if (timer != null) {
        timer.shutdownNow();
      }
    }
  }

  static void bindCounters(ProxySupervisor s, MeterRegistry r) {
    SupervisorStats st = s.stats();
    counter(r, "efs_csi_proxy_launches", "proxy processes started", st.launches);
    counter(r, "efs_csi_proxy_restarts", "proxy restarts after an exit", st.restarts);
    counter(
        r,
        "efs_csi_proxy_oom_kills",
        "proxies killed by the OOM killer in their cgroup",
        st.oomKills);
    counter(
        r,
        "efs_csi_proxy_bind_failures",
        "proxies that could not listen on their port",
        st.bindFailures);
    counter(
        r,
        "efs_csi_proxy_health_restarts",
        "proxies killed by health checks so they restart",
        st.healthRestarts);
    counter(
        r,
        "efs_csi_proxy_health_slow_rounds",
        "health rounds that left a late-answering proxy up because its process kept working",
        st.slowRounds);
    counter(
        r,
        "efs_csi_mount_target_outages",
        "times a proxy's mount target became unreachable from the node (the proxy was left up)",
        st.targetOutages);
    counter(r, "efs_csi_proxy_adopted", "live proxies adopted at plugin start", st.adopted);
    counter(
        r,
        "efs_csi_orphan_mounts_unmounted",
        "orphaned loopback mounts lazily unmounted",
        st.orphanUnmounts);
    counter(
        r,
        "efs_csi_takeovers",
        "mounts of the Go driver whose port a proxy of ours took over",
        st.takeovers);
    counter(
        r,
        "efs_csi_proxy_upgrades",
        "proxies moved on their port to this plugin's release (rolling upgrades)",
        st.proxyMoves);
    counter(
        r,
        "efs_csi_proxy_upgrade_failures",
        "proxy moves that failed (the proxy runs on, on its old release)",
        st.proxyMoveFailures);
    counter(
        r,
        "efs_csi_proxy_upgrade_skips",
        "proxy moves not tried: the listening socket could not be taken or the port refused",
        st.proxyMoveSkips);
    Gauge.builder("efs_csi_proxies_stale", st.staleProxies, AtomicLong::get)
        .description("proxies running another release's build than this plugin's")
        .register(r);
    Gauge.builder(
            "efs_csi_proxy_upgrade_last_duration_seconds", st.lastMoveMillis, n -> n.get() / 1e3)
        .description("duration of the last proxy move")
        .register(r);
    counter(r, "efs_csi_reconcile_passes", "reconcile passes", st.reconcilePasses);
    counter(
        r,
        "efs_csi_reconcile_failures",
        "reconcile passes that could not read the mount table",
        st.reconcileFailures);
    Gauge.builder(
            "efs_csi_reconcile_last_duration_seconds", st.lastReconcileNanos, n -> n.get() / 1e9)
        .description("duration of the last reconcile pass")
        .register(r);
    for (ProxyStatus.State state : ProxyStatus.State.values()) {
      Gauge.builder("efs_csi_proxies", s, count(p -> p.state() == state))
          .description("supervised proxies by state")
          .tag("state", state.name().toLowerCase(java.util.Locale.ROOT))
          .register(r);
    }
    Gauge.builder("efs_csi_proxies_crash_looping", s, count(ProxyStatus::crashLooping))
        .description("proxies restarted repeatedly without a healthy minute")
        .register(r);
    Gauge.builder("efs_csi_proxies_upstream_unhealthy", s, count(p -> !p.upstreamHealthy()))
        .description("proxies whose last upstream NFS NULL ping failed")
        .register(r);
    Gauge.builder(
            "efs_csi_proxies_mount_target_unreachable",
            s,
            count(p -> p.targetUnreachableSince().isPresent()))
        .description("proxies whose mount target is unreachable from the node (left up)")
        .register(r);
  }

  private static ToDoubleFunction<ProxySupervisor> count(
      java.util.function.Predicate<ProxyStatus> p) {
    return sup -> sup.status().stream().filter(p).count();
  }

  private static void counter(MeterRegistry r, String name, String help, AtomicLong v) {
    FunctionCounter.builder(name, v, AtomicLong::get).description(help).register(r);
  }
}

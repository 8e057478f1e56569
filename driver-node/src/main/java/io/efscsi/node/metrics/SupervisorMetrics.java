package io.efscsi.node.metrics;

import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.SupervisorStats;
import io.efscsi.supervisor.host.MountTable;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;

/**
 * The supervisor's counters and proxy states on the node's /metrics, and the per-volume ones
 * ({@link VolumeMetrics}, refreshed in the background until closed). docs/metrics.md lists them.
 */
public final class SupervisorMetrics {

  /** How often the per-volume numbers are gathered (a typical scrape interval). */
  public static final Duration REFRESH = Duration.ofSeconds(15);

  private SupervisorMetrics() {}

  /** Binds everything; the returned per-volume metrics refresh until closed. */
  public static VolumeMetrics bind(ProxySupervisor s, MountTable table, MeterRegistry r) {
    bindCounters(s, r);
    return new VolumeMetrics(VolumeMetrics.Source.of(s, table), r).start(REFRESH);
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

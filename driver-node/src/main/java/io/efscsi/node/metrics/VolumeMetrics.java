package io.efscsi.node.metrics;

import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.ProxyUsage;
import io.efscsi.supervisor.host.MountPresence;
import io.efscsi.supervisor.host.MountTable;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-volume proxy metrics ({@code efs_csi_volume_*}, labels {@code volume} and {@code port}: one
 * series set per proxy, never per pod) and the node's mounts and port range. A background refresh
 * asks every proxy's control socket and cgroup at once and updates the meters; a proxy that is gone
 * has its series removed. Scrapes never wait on a proxy.
 */
public final class VolumeMetrics {

  private static final Logger LOG = LoggerFactory.getLogger(VolumeMetrics.class);
  private static final Pattern FS = Pattern.compile("(?<![A-Za-z0-9-])(fs-[A-Za-z0-9]+)");
  private static final Pattern AP = Pattern.compile("(?<![A-Za-z0-9-])(fsap-[A-Za-z0-9]+)");
  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);

  /** Where the numbers come from: the supervisor and the mount table, or a test's lists. */
  public interface Source {
    List<ProxyStatus> status();

    List<ProxyUsage> usage(Duration timeout);

    ProxySupervisor.PortUse portUse();

    /** Loopback NFS mounts (kernel mounts through one of the node's proxies). */
    int mounts() throws IOException;

    static Source of(ProxySupervisor s, MountTable table) {
      return new Source() {
        @Override
        public List<ProxyStatus> status() {
          return s.status();
        }

        @Override
        public List<ProxyUsage> usage(Duration timeout) {
          return s.usage(timeout);
        }

        @Override
        public ProxySupervisor.PortUse portUse() {
          return s.portUse();
        }

        @Override
        public int mounts() throws IOException {
          return MountPresence.byPort(table.read()).values().stream().mapToInt(List::size).sum();
        }
      };
    }
  }

  /** The latest numbers of one proxy; the meters read them. */
  private static final class Row {
    volatile ProxyStatus status;
    volatile ProxyUsage usage;
    final List<Meter> meters = new ArrayList<>();
  }

  private final Source source;
  private final MeterRegistry registry;
  private final Map<String, Row> rows = new HashMap<>();
  private volatile int mounts;
  private volatile ProxySupervisor.PortUse ports = new ProxySupervisor.PortUse(0, 0);

  public VolumeMetrics(Source source, MeterRegistry registry) {
    this.source = source;
    this.registry = registry;
    Gauge.builder("efs_csi_mounts", this, m -> m.mounts)
        .description("kernel NFS mounts through this node's proxies (staging and pod targets)")
        .register(registry);
    Gauge.builder("efs_csi_proxy_ports", this, m -> m.ports.inUse())
        .description("ports of the proxy port range by state")
        .tag("state", "in_use")
        .register(registry);
    // by the allocator's own rules: "free" is what it would hand out, so the alert on it fires
    // before staging fails with "no free proxy port"
    Gauge.builder("efs_csi_proxy_ports", this, m -> m.ports.free())
        .description("ports of the proxy port range by state")
        .tag("state", "free")
        .register(registry);
    Gauge.builder("efs_csi_proxy_ports", this, m -> m.ports.mounted())
        .description("ports of the proxy port range by state")
        .tag("state", "mounted")
        .register(registry);
    Gauge.builder("efs_csi_proxy_ports", this, m -> m.ports.listened())
        .description("ports of the proxy port range by state")
        .tag("state", "listened")
        .register(registry);
  }

  /** One refresh: new proxies get series, gone ones lose them. */
  public synchronized void refresh() {
    Map<String, ProxyUsage> usage = new HashMap<>();
    for (ProxyUsage u : source.usage(ASK_TIMEOUT)) {
      usage.put(u.key(), u);
    }
    Map<String, Row> seen = new HashMap<>();
    for (ProxyStatus s : source.status()) {
      Row row = rows.get(s.key());
      if (row != null && row.status.port() != s.port()) {
        remove(row);
        row = null;
      }
      if (row == null) {
        row = new Row();
        row.status = s;
        row.usage = usage.get(s.key());
        register(row, Tags.of("volume", volume(s.key()), "port", Integer.toString(s.port())));
      }
      row.status = s;
      row.usage = usage.get(s.key());
      seen.put(s.key(), row);
    }
    rows.forEach((key, row) -> {
      if (!seen.containsKey(key)) {
        remove(row);
      }
    });
    rows.clear();
    rows.putAll(seen);
    ports = source.portUse();
    try {
      mounts = source.mounts();
    } catch (IOException e) {
      LOG.debug("cannot count mounts: {}", e.toString());
    }
  }

  /** The volume a mount key serves: {@code fs-…} or {@code fs-…::fsap-…}. */
  public static String volume(String key) {
    Matcher fs = FS.matcher(key);
    if (!fs.find()) {
      return "unknown";
    }
    Matcher ap = AP.matcher(key);
    return ap.find() ? fs.group(1) + "::" + ap.group(1) : fs.group(1);
  }

  private void register(Row row, Tags tags) {
    gauge(
        row,
        tags,
        "efs_csi_volume_proxy_up",
        "1 when the volume's proxy runs",
        r -> r.status.state() == ProxyStatus.State.RUNNING ? 1 : 0);
    gauge(
        row,
        tags,
        "efs_csi_volume_proxy_crash_looping",
        "1 while the proxy crash-loops",
        r -> r.status.crashLooping() ? 1 : 0);
    gauge(
        row,
        tags,
        "efs_csi_volume_proxy_upstream_healthy",
        "1 when the last NFS NULL ping through the proxy succeeded",
        r -> r.status.upstreamHealthy() ? 1 : 0);
    gauge(
        row,
        tags,
        "efs_csi_volume_mount_target_unreachable",
        "1 while the volume's mount target answers neither the proxy nor the supervisor's own probe"
            + " (the network or the target is down; the proxy is left up)",
        r -> r.status.targetUnreachableSince().isPresent() ? 1 : 0);
    counter(row, tags, "efs_csi_volume_proxy_restarts", "proxy restarts", r -> r.status.restarts());
    counter(
        row, tags, "efs_csi_volume_proxy_oom_kills", "proxy OOM kills", r -> r.status.oomKills());
    counter(
        row,
        tags,
        "efs_csi_volume_bytes_to_server",
        "bytes sent upstream",
        r -> counter(r, "bytes_to_server"));
    counter(
        row,
        tags,
        "efs_csi_volume_bytes_to_client",
        "bytes sent to the kernel client",
        r -> counter(r, "bytes_to_client"));
    gauge(
        row,
        tags,
        "efs_csi_volume_client_connections",
        "kernel client connections",
        r -> counter(r, "client_connections"));
    gauge(
        row,
        tags,
        "efs_csi_volume_upstream_connections",
        "upstream connections",
        r -> counter(r, "upstream_connections"));
    counter(
        row,
        tags,
        "efs_csi_volume_upstream_failures",
        "upstream connections that failed",
        r -> counter(r, "upstream_failures_total"));
    counter(
        row,
        tags,
        "efs_csi_volume_upstream_connect_fallbacks",
        "upstream connects won by the other address family after the preferred one failed or"
            + " stalled (Happy Eyeballs)",
        r -> counter(r, "upstream_connect_fallbacks_total"));
    counter(
        row,
        tags,
        "efs_csi_volume_tls_handshake_failures",
        "TLS handshakes with the mount target that failed",
        r -> counter(r, "tls_handshake_failures_total"));
    gauge(
        row,
        tags,
        "efs_csi_volume_proxy_memory_bytes",
        "memory charged to the proxy's cgroup",
        r -> memory(r.usage == null ? -1 : r.usage.memoryCurrent()));
    gauge(
        row,
        tags,
        "efs_csi_volume_proxy_memory_peak_bytes",
        "the most memory ever charged to the proxy's cgroup",
        r -> memory(r.usage == null ? -1 : r.usage.memoryPeak()));
    gauge(
        row,
        tags,
        "efs_csi_volume_proxy_memory_limit_bytes",
        "the proxy cgroup's limit",
        r -> memory(r.usage == null ? -1 : r.usage.memoryLimit()));
  }

  /** Counters of the proxy's control socket; they restart at 0 with the proxy (a counter reset). */
  private static double counter(Row r, String name) {
    ProxyUsage u = r.usage;
    return u == null ? 0 : u.counter(name);
  }

  private static double memory(long bytes) {
    return bytes < 0 ? Double.NaN : bytes;
  }

  private void gauge(Row row, Tags tags, String name, String help, ToDoubleFunction<Row> f) {
    row.meters.add(Gauge.builder(name, row, f).description(help).tags(tags).register(registry));
  }

  private void counter(Row row, Tags tags, String name, String help, ToDoubleFunction<Row> f) {
    row.meters.add(
        FunctionCounter.builder(name, row, f).description(help).tags(tags).register(registry));
  }

  private void remove(Row row) {
    row.meters.forEach(registry::remove);
    row.meters.clear();
  }
}

package io.efscsi.node.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.ProxyUsage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Per-volume series appear with a proxy, follow its numbers and go with it. */
class VolumeMetricsTest {

  final List<ProxyStatus> status = new ArrayList<>();
  final List<ProxyUsage> usage = new ArrayList<>();
  int mounts;

  final VolumeMetrics.Source source =
      new VolumeMetrics.Source() {
        @Override
        public List<ProxyStatus> status() {
          return List.copyOf(status);
        }

        @Override
        public List<ProxyUsage> usage(Duration timeout) {
          return List.copyOf(usage);
        }

        @Override
        public ProxySupervisor.PortUse portUse() {
          // a Go-driver mount left alone on one port, another listener on two
          return new ProxySupervisor.PortUse(status.size(), 1001, 1, 2);
        }

        @Override
        public int mounts() {
          return mounts;
        }
      };

  static ProxyStatus proxy(String key, int port, ProxyStatus.State state, long restarts, long oom) {
    return new ProxyStatus(
        key,
        port,
        1,
        state,
        Set.of("/s"),
        restarts,
        oom,
        Optional.empty(),
        restarts > 4,
        true,
        Optional.empty(),
        Optional.empty());
  }

  static double value(PrometheusMeterRegistry r, String series) {
    return r.scrape()
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElse(Double.NaN);
  }

  @Test
  void seriesFollowTheProxiesAndGoWithThem() {
    PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    VolumeMetrics m = new VolumeMetrics(source, r);
    String key = "fs-0123456789abcdef0|fsap-0aa11bb22cc33dd44|10.0.1.5:2049|tls";
    status.add(proxy(key, 20049, ProxyStatus.State.RUNNING, 2, 1));
    usage.add(
        new ProxyUsage(
            key,
            20049,
            "v2:efs-csi/proxy-20049",
            5 << 20,
            9 << 20,
            64 << 20,
            Map.of("bytes_to_client", 1234L, "tls_handshake_failures_total", 3L)));
    mounts = 3;
    m.refresh();
    String labels = "{port=\"20049\",volume=\"fs-0123456789abcdef0::fsap-0aa11bb22cc33dd44\"}";
    assertEquals(1, value(r, "efs_csi_volume_proxy_up" + labels));
    assertEquals(2, value(r, "efs_csi_volume_proxy_restarts_total" + labels));
    assertEquals(1, value(r, "efs_csi_volume_proxy_oom_kills_total" + labels));
    assertEquals(1234, value(r, "efs_csi_volume_bytes_to_client_total" + labels));
    assertEquals(3, value(r, "efs_csi_volume_tls_handshake_failures_total" + labels));
    assertEquals(5 << 20, value(r, "efs_csi_volume_proxy_memory_bytes" + labels));
    assertEquals(9 << 20, value(r, "efs_csi_volume_proxy_memory_peak_bytes" + labels));
    assertEquals(64 << 20, value(r, "efs_csi_volume_proxy_memory_limit_bytes" + labels));
    assertEquals(3, value(r, "efs_csi_mounts"));
    assertEquals(997, value(r, "efs_csi_proxy_ports{state=\"free\"}"));
    assertEquals(1, value(r, "efs_csi_proxy_ports{state=\"in_use\"}"));
    assertEquals(1, value(r, "efs_csi_proxy_ports{state=\"mounted\"}"));
    assertEquals(2, value(r, "efs_csi_proxy_ports{state=\"listened\"}"));

    status.set(0, proxy(key, 20049, ProxyStatus.State.BACKOFF, 5, 1));
    usage.clear();
    m.refresh();
    assertEquals(0, value(r, "efs_csi_volume_proxy_up" + labels));
    assertEquals(1, value(r, "efs_csi_volume_proxy_crash_looping" + labels));
    assertTrue(Double.isNaN(value(r, "efs_csi_volume_proxy_memory_bytes" + labels)));

    status.clear();
    m.refresh();
    assertFalse(r.scrape().contains("efs_csi_volume_"), "a gone proxy's series are removed");
  }

  @Test
  void theVolumeLabelIsTheFileSystemAndAccessPointOfTheKey() {
    assertEquals("fs-1", VolumeMetrics.volume("fs-1"));
    assertEquals("fs-abc::fsap-def", VolumeMetrics.volume("fs-abc|fsap-def|h:2049|tls"));
    assertEquals("fs-abc", VolumeMetrics.volume("fs-abc|-|h:2049|tls"));
    assertEquals("fs-0a1", VolumeMetrics.volume("efs-utils:fs-0a1.var.lib.20123"));
    assertEquals("unknown", VolumeMetrics.volume("something"));
  }
}

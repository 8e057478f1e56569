package io.efscsi.it;

import static io.efscsi.it.HelmChartTest.render;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.efscsi.common.grpc.CallMetricsInterceptor;
import io.efscsi.controller.cloud.ApiMetrics;
import io.efscsi.node.metrics.NfsClientMetrics;
import io.efscsi.node.metrics.SupervisorMetrics;
import io.efscsi.node.metrics.VolumeMetrics;
import io.efscsi.supervisor.PortAllocator;
import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.ProxyUsage;
import io.efscsi.supervisor.SupervisorConfig;
import io.efscsi.supervisor.cgroup.CgroupDetector;
import io.efscsi.supervisor.host.MountTable;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The chart's Grafana dashboard and PrometheusRule against what the driver exports: the metric
 * names come from a real registry with the node's and the controller's metrics bound (not from a
 * list written here), every panel query and alert expression is parsed as PromQL, and every metric
 * they name must be one of them.
 */
class HelmMonitoringTest {

  static Set<String> exported;

  /** Every series name the node and controller expose, from a registry bound as they bind it. */
  @BeforeAll
  static void exportedNames() throws Exception {
    PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Path state = Files.createTempDirectory("efscsi-monitoring");
    MountTable empty = List::of;
    try {
      ProxySupervisor s =
          new ProxySupervisor(
              SupervisorConfig.defaults(state),
              CgroupDetector.choose("none", Path.of("/sys/fs/cgroup"), "efs-csi", "x", state),
              (config, log, placement) -> {
                throw new java.io.IOException("no proxies in this test");
              },
              new io.efscsi.supervisor.process.ProcProcessTable(),
              empty,
              mountPoint -> {},
              PortAllocator::loopbackBindable,
              Clock.systemUTC(),
              new ProxySupervisor.Listener() {});
      SupervisorMetrics.bind(s, empty, r).close();
      s.close();
      String key = "fs-0123|fsap-4567|10.0.0.1:2049|tls";
      ProxyStatus one =
          new ProxyStatus(
              key,
              20049,
              1,
              ProxyStatus.State.RUNNING,
              Set.of("/s"),
              0,
              0,
              Optional.empty(),
              false,
              true,
              Optional.empty(),
              Optional.empty());
      new VolumeMetrics(
              new VolumeMetrics.Source() {
                @Override
                public List<ProxyStatus> status() {
                  return List.of(one);
                }

                @Override
                public List<ProxyUsage> usage(Duration timeout) {
                  return List.of(new ProxyUsage(key, 20049, "v2:x", 1, 2, 3, Map.of()));
                }

                @Override
                public ProxySupervisor.PortUse portUse() {
                  return new ProxySupervisor.PortUse(1, 1001);
                }

                @Override
                public int mounts() {
                  return 1;
                }
              },
              r)
          .refresh();
      String nfs =
          """
          device 127.0.0.1:/ mounted on /pods/u/volumes/kubernetes.io~csi/pv-1/mount \
          with fstype nfs4 statvers=1.1
          	opts:	rw,vers=4.1,port=20049,addr=127.0.0.1
          	bytes:	1 2 3 4 5 6 7 8
          	xprt:	tcp 0 0 1 0 2 90 90 0 120 0 2 0 0
          	per-op statistics
          	        READ: 1 1 0 0 0 0 1 1 0
          	    SEQUENCE: 1 1 0 0 0 0 1 1 0
          """;
      new NfsClientMetrics(
              new NfsClientMetrics.Source() {
                @Override
                public List<ProxyStatus> status() {
                  return List.of(one);
                }

                @Override
                public java.io.BufferedReader mountstats() {
                  return new java.io.BufferedReader(new java.io.StringReader(nfs));
                }
              },
              r)
          .refresh();
      callOnce(new CallMetricsInterceptor(r), "NodeStageVolume", Status.INTERNAL);
      new ApiMetrics(r);
      exported = new TreeSet<>();
      Pattern sample = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]");
      r.scrape()
          .lines()
          .forEach(l -> {
            Matcher m = sample.matcher(l);
            if (!l.startsWith("#") && m.find()) {
              exported.add(m.group(1));
            }
          });
    } finally {
      HostCleanup.deleteTree(state);
    }
  }

  /** One CSI call through the interceptor, closed with {@code status}. */
  static void callOnce(CallMetricsInterceptor i, String method, Status status) {
    MethodDescriptor<Object, Object> md =
        MethodDescriptor.newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("csi.v1.Node/" + method)
            .setRequestMarshaller(marshaller())
            .setResponseMarshaller(marshaller())
            .build();
    ServerCall<Object, Object> call =
        new ServerCall<>() {
          @Override
          public void request(int n) {}

          @Override
          public void sendHeaders(Metadata headers) {}

          @Override
          public void sendMessage(Object message) {}

          @Override
          public void close(Status s, Metadata trailers) {}

          @Override
          public boolean isCancelled() {
            return false;
          }

          @Override
          public MethodDescriptor<Object, Object> getMethodDescriptor() {
            return md;
          }
        };
    i.interceptCall(
        call,
        new Metadata(),
        (c, h) -> {
          c.close(status, new Metadata());
          return new ServerCall.Listener<>() {};
        });
  }

  static MethodDescriptor.Marshaller<Object> marshaller() {
    return new MethodDescriptor.Marshaller<>() {
      @Override
      public java.io.InputStream stream(Object value) {
        return java.io.InputStream.nullInputStream();
      }

      @Override
      public Object parse(java.io.InputStream stream) {
        return null;
      }
    };
  }

  static void assertExported(String where, String expr) {
    Set<String> names = PromQl.metricNames(expr);
    assertFalse(names.isEmpty(), where + " selects no metric: " + expr);
    for (String n : names) {
      assertTrue(
          exported.contains(n), where + " names " + n + ", which the driver does not export");
    }
  }

  @Test
  void theExporterHasTheSeriesTheDocsPromise() {
    for (String n :
        List.of(
            "efs_csi_volume_proxy_up",
            "efs_csi_volume_proxy_oom_kills_total",
            "efs_csi_volume_proxy_memory_bytes",
            "efs_csi_proxy_ports",
            "efs_csi_mounts",
            "efs_csi_orphan_mounts_unmounted_total",
            "efs_csi_csi_call_duration_seconds_bucket",
            "efs_csi_nfs_request_execute_seconds_sum",
            "efs_csi_nfs_request_rtt_seconds_count",
            "efs_csi_nfs_request_errors_total",
            "efs_csi_nfs_retransmissions_total",
            "efs_csi_nfs_major_timeouts_total",
            "efs_csi_nfs_write_bytes_total",
            "efs_csi_nfs_connects_total",
            "aws_efs_csi_api_request_throttles_total")) {
      assertTrue(exported.contains(n), n + " not in " + exported);
    }
  }

  @Test
  void everyDashboardQueryNamesAnExportedMetric() throws Exception {
    List<HasMetadata> all = render("all-on.yaml");
    ConfigMap cm = HelmChartTest.named(all, ConfigMap.class, "efs-csi-dashboard").orElseThrow();
    assertEquals("monitoring", cm.getMetadata().getNamespace());
    assertEquals("1", cm.getMetadata().getLabels().get("grafana_dashboard"));
    JsonNode d = new ObjectMapper().readTree(cm.getData().get("efs-csi.json"));
    assertEquals("efs-csi-java", d.path("uid").asText());
    assertTrue(d.path("schemaVersion").asInt() >= 36);
    List<JsonNode> panels = new ArrayList<>();
    d.path("panels")
        .forEach(p -> {
          panels.add(p);
          p.path("panels").forEach(panels::add);
        });
    int queries = 0;
    Set<Integer> ids = new TreeSet<>();
    for (JsonNode p : panels) {
      assertTrue(ids.add(p.path("id").asInt()), "duplicate panel id " + p.path("id"));
      assertTrue(p.path("gridPos").has("w") && p.path("gridPos").has("h"), p.toString());
      for (JsonNode t : p.path("targets")) {
        assertExported("panel '" + p.path("title").asText() + "'", t.path("expr").asText());
        queries++;
      }
    }
    for (JsonNode v : d.path("templating").path("list")) {
      if (v.path("type").asText().equals("query")) {
        Matcher m =
            Pattern.compile("label_values\\(([a-z_:]+), *[a-z_]+\\)")
                .matcher(v.path("definition").asText());
        assertTrue(m.matches(), v.toString());
        assertTrue(exported.contains(m.group(1)), v.toString());
      }
    }
    assertTrue(queries >= 20, "only " + queries + " queries");
  }

  @Test
  void everyAlertParsesNamesExportedMetricsAndHasARunbook() throws Exception {
    List<HasMetadata> all = render("all-on.yaml");
    GenericKubernetesResource rule = HelmChartTest.custom(all, "PrometheusRule", "efs-csi");
    JsonNode spec = new ObjectMapper().valueToTree(rule.getAdditionalProperties().get("spec"));
    String doc = Files.readString(Path.of("../docs/troubleshooting.md"));
    Set<String> alerts = new TreeSet<>();
    for (JsonNode group : spec.path("groups")) {
      for (JsonNode r : group.path("rules")) {
        String alert = r.path("alert").asText();
        alerts.add(alert);
        assertExported("alert " + alert, r.path("expr").asText());
        if (r.has("for")) {
          assertTrue(r.path("for").asText().matches("[0-9]+[smh]"), alert);
        }
        assertEquals("storage", r.path("labels").path("team").asText(), alert);
        String runbook = r.path("annotations").path("runbook_url").asText();
        String anchor = runbook.substring(runbook.indexOf('#') + 1);
        assertEquals(alert.toLowerCase(java.util.Locale.ROOT), anchor);
        assertTrue(doc.contains("\n### " + alert + "\n"), "no runbook section ### " + alert);
      }
    }
    assertEquals(
        Set.of(
            "EfsCsiProxyCrashLooping",
            "EfsCsiMountTargetUnreachable",
            "EfsCsiProxyOOMKilled",
            "EfsCsiOrphanMountsUnmounted",
            "EfsCsiProxyPortsNearlyExhausted",
            "EfsCsiStageFailures",
            "EfsCsiNfsRetransmissions",
            "EfsCsiEfsApiThrottled"),
        alerts);
    assertTrue(
        spec.toString().contains("efs_csi_proxy_ports{state=\\\"free\\\"} < 20"),
        "portsFreeBelow reaches the rule");
    assertTrue(
        spec.toString().contains("(efs_csi_nfs_retransmissions_total[15m])) > 7"),
        "nfsRetransmissionsAbove reaches the rule");
  }

  @Test
  void theParserRefusesWhatPrometheusRefuses() {
    assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("rate(x[5])"));
    assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("sum(x"));
    assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("ratez(x[5m])"));
    assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("x{a=b}"));
    assertEquals(
        Set.of("a_total", "b"),
        PromQl.metricNames(
            "sum by (x, y) (rate(a_total{l=~\"v|w\"}[5m])) / on (x) group_left b > bool 0.5"));
  }

  @Test
  void theNodeOpensNoMetricsPortByDefault() {
    List<HasMetadata> defaults = render("defaults");
    assertTrue(HelmChartTest.named(defaults, Service.class, "efs-csi-node-metrics").isEmpty());
    var pod = HelmUpstreamValuesTest.nodePod(defaults);
    var plugin = HelmChartTest.container(pod, "efs-plugin");
    assertTrue(
        HelmChartTest.args(plugin).stream().noneMatch(a -> a.startsWith("--http-endpoint")),
        "" + HelmChartTest.args(plugin));
    assertTrue(
        pod.getContainers().stream()
            .flatMap(c -> c.getPorts().stream())
            .noneMatch(p -> p.getName().equals("metrics")));
  }

  @Test
  void theNodeMetricsAreAuthenticatedUnlessAnInsecureAddressIsAsked() {
    var secure =
        HelmUpstreamValuesTest.nodePod(render("defaults", Map.of("node.metrics.enabled", true)));
    assertTrue(
        HelmChartTest.args(HelmChartTest.container(secure, "efs-plugin"))
            .containsAll(List.of("--http-endpoint=0.0.0.0:3302", "--metrics-auth=kubernetes")));
    var plain =
        HelmUpstreamValuesTest.nodePod(
            render(
                "defaults",
                Map.of(
                    "node.metrics.enabled",
                    true,
                    "node.metrics.insecureBindAddress",
                    "127.0.0.1")));
    List<String> args = HelmChartTest.args(HelmChartTest.container(plain, "efs-plugin"));
    assertTrue(args.contains("--http-endpoint=127.0.0.1:3302"), "" + args);
    assertFalse(args.contains("--metrics-auth=kubernetes"), "" + args);
    // the ServiceMonitor scrapes the authenticated endpoint over HTTPS with Prometheus' token
    List<HasMetadata> monitored =
        render(
            "defaults",
            Map.of("node.metrics.enabled", true, "node.metrics.serviceMonitor.enabled", true));
    GenericKubernetesResource sm =
        monitored.stream()
            .filter(GenericKubernetesResource.class::isInstance)
            .map(GenericKubernetesResource.class::cast)
            .filter(r -> r.getKind().equals("ServiceMonitor"))
            .findFirst()
            .orElseThrow();
    @SuppressWarnings("unchecked")
    Map<String, Object> endpoint =
        ((List<Map<String, Object>>)
                ((Map<String, Object>) sm.getAdditionalProperties().get("spec")).get("endpoints"))
            .getFirst();
    assertEquals("https", endpoint.get("scheme"));
    assertEquals(
        "/var/run/secrets/kubernetes.io/serviceaccount/token", endpoint.get("bearerTokenFile"));
    // a PodMonitor cannot read Prometheus' token file: the chart asks for the Secret instead
    var refused =
        assertThrows(
            IllegalStateException.class,
            () ->
                render(
                    "defaults",
                    Map.of("node.metrics.enabled", true, "node.metrics.podMonitor.enabled", true)));
    assertTrue(refused.getMessage().contains("bearerTokenSecret"), refused.getMessage());
  }

  @Test
  void theNodeMetricsServiceSelectsTheNodePodsWhenMetricsAreOn() {
    List<HasMetadata> defaults = render("defaults", Map.of("node.metrics.enabled", true));
    Service svc =
        HelmChartTest.named(defaults, Service.class, "efs-csi-node-metrics").orElseThrow();
    assertEquals("None", svc.getSpec().getClusterIP());
    assertEquals(3302, svc.getSpec().getPorts().getFirst().getPort());
    var pod = HelmUpstreamValuesTest.nodePod(defaults);
    assertTrue(
        pod.getContainers().stream()
            .flatMap(c -> c.getPorts().stream())
            .anyMatch(p -> p.getName().equals("metrics") && p.getContainerPort() == 3302));
    var labels =
        HelmUpstreamValuesTest.node(defaults).getSpec().getTemplate().getMetadata().getLabels();
    assertTrue(labels.entrySet().containsAll(svc.getSpec().getSelector().entrySet()));
    assertFalse(
        defaults.stream().anyMatch(GenericKubernetesResource.class::isInstance),
        "no monitor, rule or other CRD object by default");
    assertTrue(HelmChartTest.named(defaults, ConfigMap.class, "efs-csi-dashboard").isEmpty());

    List<HasMetadata> off = render("all-off.yaml");
    assertTrue(HelmChartTest.named(off, Service.class, "efs-csi-node-metrics").isEmpty());
    assertFalse(
        HelmChartTest.args(
                HelmChartTest.container(HelmUpstreamValuesTest.nodePod(off), "efs-plugin"))
            .stream()
            .anyMatch(a -> a.startsWith("--http-endpoint")));
  }
}

package io.efscsi.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.grpc.Endpoint;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CommonOptionsTest {

  private final FlagSet set = new FlagSet().addAll(CommonOptions.FLAGS);

  private CommonOptions of(Map<String, String> values) throws UsageException {
    return CommonOptions.from(Flags.of(set, values));
  }

  @Test
  void goDriverDefaultEndpointIsTmpCsiSock() throws UsageException {
    CommonOptions o = of(Map.of());
    assertEquals(new Endpoint.Unix(Path.of("/tmp/csi.sock")), o.endpoint());
    assertTrue(o.httpEndpoint().isEmpty());
    assertEquals(MetricsAuth.NONE, o.metricsAuth());
    assertEquals(2, o.verbosity());
  }

  /** Every flag klog's InitFlags gives the Go binary starts ours, in Go's syntaxes. */
  @Test
  void theGoBinarysKlogFlagsAreAcceptedAndTheIneffectiveOnesNamed() throws UsageException {
    Flags f =
        set.parse(
            java.util.List.of(
                "--alsologtostderr",
                "-log_dir=/var/log/efs",
                "--log_file",
                "/var/log/efs/plugin.log",
                "--log_file_max_size=100",
                "--stderrthreshold=WARNING",
                "--vmodule=node*=5",
                "--log_backtrace_at=node.go:100",
                "--add_dir_header",
                "--skip_headers=true",
                "--skip_log_headers",
                "--one_output",
                "--legacy_stderr_threshold_behavior=false",
                "--v=4",
                "--logtostderr=true"));
    assertEquals(4, CommonOptions.from(f).verbosity());
    java.util.List<String> warned = CommonOptions.klogWarnings(f);
    assertEquals(11, warned.size(), warned.toString());
    assertTrue(
        warned.getFirst().startsWith("flag --log_dir (klog) is accepted"), warned.getFirst());
    assertEquals(java.util.List.of(), CommonOptions.klogWarnings(set.parse(java.util.List.of())));
    UsageException e =
        assertThrows(UsageException.class, () -> set.parse(java.util.List.of("--log_fiel=x")));
    assertTrue(e.getMessage().contains("log_fiel"), e.getMessage());
  }

  @Test
  void httpEndpointAndDebugLogs() throws UsageException {
    CommonOptions o = of(Map.of("http-endpoint", "0.0.0.0:3301", "debug-logs", "true"));
    assertEquals(new HostPort("0.0.0.0", 3301), o.httpEndpoint().orElseThrow());
    assertEquals(5, o.verbosity());
  }

  @Test
  void badCombinationsAreUsageErrorsNamingTheFlags() {
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("endpoint", "http://x")))
            .getMessage()
            .startsWith("flag '--endpoint': invalid endpoint 'http://x'"));
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("http-endpoint", "3301")))
            .getMessage()
            .startsWith("flag '--http-endpoint'"));
    assertTrue(
        assertThrows(
                UsageException.class,
                () -> of(Map.of("http-endpoint", ":1", "metrics-cert-file", "/c.pem")))
            .getMessage()
            .contains("must be given together"));
    assertTrue(
        assertThrows(
                UsageException.class,
                () -> of(Map.of("metrics-cert-file", "/c.pem", "metrics-key-file", "/k.pem")))
            .getMessage()
            .contains("needs '--http-endpoint'"));
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("v", "-1")))
            .getMessage()
            .contains("'--v'"));
  }

  @Test
  void metricsAuthKubernetesWithOrWithoutCertificateFiles() throws UsageException {
    assertEquals(
        MetricsAuth.KUBERNETES,
        of(Map.of("http-endpoint", "0.0.0.0:3302", "metrics-auth", "kubernetes")).metricsAuth());
    CommonOptions withFiles =
        of(
            Map.of(
                "http-endpoint", "0.0.0.0:3302",
                "metrics-auth", "kubernetes",
                "metrics-cert-file", "/tls/tls.crt",
                "metrics-key-file", "/tls/tls.key"));
    assertEquals(MetricsAuth.KUBERNETES, withFiles.metricsAuth());
    assertEquals(Path.of("/tls/tls.crt"), withFiles.metricsCertFile().orElseThrow());
    assertEquals(
        MetricsAuth.NONE,
        of(Map.of("http-endpoint", ":3301", "metrics-auth", "none")).metricsAuth());
  }

  @Test
  void metricsAuthRefusesUnknownValuesAndNoEndpoint() {
    assertEquals(
        "invalid value 'rbac' for flag '--metrics-auth': expected none or kubernetes",
        assertThrows(
                UsageException.class,
                () -> of(Map.of("http-endpoint", ":3301", "metrics-auth", "rbac")))
            .getMessage());
    assertEquals(
        "invalid value '' for flag '--metrics-auth': expected none or kubernetes",
        assertThrows(
                UsageException.class,
                () -> of(Map.of("http-endpoint", ":3301", "metrics-auth", "")))
            .getMessage());
    assertEquals(
        "flag '--metrics-auth=kubernetes' needs '--http-endpoint'",
        assertThrows(UsageException.class, () -> of(Map.of("metrics-auth", "kubernetes")))
            .getMessage());
  }
}

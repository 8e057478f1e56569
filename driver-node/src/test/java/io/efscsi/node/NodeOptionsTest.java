package io.efscsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeOptionsTest {

  private final FlagSet set = new FlagSet().addAll(NodeOptions.FLAGS);

  private NodeOptions of(Map<String, String> values) throws UsageException {
    return NodeOptions.from(Flags.of(set, values));
  }

  @Test
  void defaultsMatchTheGoDriver() throws UsageException {
    NodeOptions o = of(Map.of());
    assertEquals(Path.of("/var/run/efs-csi"), o.stateDir());
    assertEquals(Path.of("/var/lib/kubelet"), o.kubeletRootDir(), "the chart's node.kubeletPath");
    assertFalse(o.volMetricsOptIn());
    assertEquals(Duration.ofMinutes(240), o.volMetricsRefreshPeriod());
    assertEquals(5, o.volMetricsFsRateLimit());
    assertTrue(o.maxInflightMountCalls().isEmpty());
    assertTrue(o.volumeAttachLimit().isEmpty());
    assertEquals(Duration.ofSeconds(30), o.unmountTimeout());
  }

  @Test
  void theChartsNodeArgsParse() throws UsageException {
    // The args the upstream chart's node DaemonSet passes.
    Flags flags =
        set.parse(
            List.of(
                "--vol-metrics-opt-in=false",
                "--vol-metrics-refresh-period=240",
                "--vol-metrics-fs-rate-limit=5",
                "--max-inflight-mount-calls-opt-in=true",
                "--max-inflight-mount-calls=10",
                "--volume-attach-limit-opt-in=true",
                "--volume-attach-limit=20",
                "--force-unmount-after-timeout=false",
                "--unmount-timeout=30s"));
    NodeOptions o = NodeOptions.from(flags);
    assertEquals(10, o.maxInflightMountCalls().getAsInt());
    assertEquals(20, o.volumeAttachLimit().getAsInt());
  }

  @Test
  void optInsNeedAPositiveValueAsInTheGoDriver() {
    UsageException e =
        assertThrows(
            UsageException.class, () -> of(Map.of("max-inflight-mount-calls-opt-in", "true")));
    assertEquals(
        "flag '--max-inflight-mount-calls-opt-in' needs '--max-inflight-mount-calls' greater than 0, got -1",
        e.getMessage());
    assertThrows(
        UsageException.class,
        () -> of(Map.of("volume-attach-limit-opt-in", "true", "volume-attach-limit", "0")));
  }

  @Test
  void theKubeletRootDirIsAbsoluteNormalisedAndNotTheRoot() throws UsageException {
    assertEquals(
        Path.of("/data/kubelet"),
        of(Map.of("kubelet-root-dir", "/data//kubelet/")).kubeletRootDir());
    for (String bad : List.of("var/lib/kubelet", "/", "/..", "")) {
      assertEquals(
          "invalid value '"
              + bad
              + "' for flag '--kubelet-root-dir': expected an absolute path below /, such as"
              + " /var/lib/kubelet",
          assertThrows(UsageException.class, () -> of(Map.of("kubelet-root-dir", bad)))
              .getMessage());
    }
  }

  @Test
  void badValuesAreRefusedNamingTheFlag() {
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("state-dir", "relative/dir")))
            .getMessage()
            .contains("'--state-dir'"));
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("unmount-timeout", "0s")))
            .getMessage()
            .contains("'--unmount-timeout'"));
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("vol-metrics-refresh-period", "-1")))
            .getMessage()
            .contains("'--vol-metrics-refresh-period'"));
    assertTrue(
        assertThrows(UsageException.class, () -> of(Map.of("vol-metrics-fs-rate-limit", "0")))
            .getMessage()
            .contains("'--vol-metrics-fs-rate-limit'"));
  }
}

package io.efscsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import io.efscsi.supervisor.SupervisorConfig;
import io.efscsi.supervisor.cgroup.Limits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SupervisorOptionsTest {

  private final FlagSet set = new FlagSet().addAll(NodeOptions.FLAGS);

  private SupervisorOptions of(Map<String, String> values) throws UsageException {
    return NodeOptions.from(Flags.of(set, values)).supervisor();
  }

  @org.junit.jupiter.api.Test
  void defaults() throws UsageException {
    SupervisorOptions o = of(Map.of());
    assertEquals(20049, o.config().portLower());
    assertEquals(21049, o.config().portUpper());
    assertEquals(new Limits(256L << 20, 64), o.config().limits());
    assertEquals("auto", o.cgroupMode());
    assertEquals("efs-csi", o.cgroupParent());
    assertEquals(Path.of("/var/run/efs-csi"), o.config().stateDir());
    assertEquals(Duration.ofSeconds(5), o.config().reconcileInterval());
    assertEquals(Duration.ofSeconds(60), o.config().mountGrace());
    assertEquals(
        new SupervisorConfig.Upgrades(true, Duration.ofSeconds(60), Duration.ofSeconds(10)),
        o.config().upgrades());
  }

  @org.junit.jupiter.api.Test
  void proxyUpgradesCanBePacedOrTurnedOff() throws UsageException {
    SupervisorOptions o =
        of(
            Map.of(
                "proxy-upgrade", "Never",
                "proxy-upgrade-delay", "0s",
                "proxy-upgrade-interval", "2m"));
    assertEquals(
        new SupervisorConfig.Upgrades(false, Duration.ZERO, Duration.ofMinutes(2)),
        o.config().upgrades());
  }

  @org.junit.jupiter.api.Test
  void valuesAreTaken() throws UsageException {
    SupervisorOptions o =
        of(
            Map.of(
                "proxy-port-range", "30000-30010",
                "proxy-cgroup", "V1",
                "proxy-memory-limit", "1Gi",
                "proxy-pids-limit", "0",
                "reconcile-interval", "2s",
                "state-dir", "/run/x"));
    assertEquals(30000, o.config().portLower());
    assertEquals(30010, o.config().portUpper());
    assertEquals(new Limits(1L << 30, 0), o.config().limits());
    assertEquals("v1", o.cgroupMode());
    assertEquals(Duration.ofSeconds(2), o.config().reconcileInterval());
    assertEquals(Path.of("/run/x"), o.config().stateDir());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "proxy-port-range|21049-20049|invalid value '21049-20049' for flag '--proxy-port-range': expected ports 1024-65535 with lower <= upper",
        "proxy-port-range|20049|invalid value '20049' for flag '--proxy-port-range': expected lower-upper, e.g. 20049-21049",
        "proxy-cgroup|v3|invalid value 'v3' for flag '--proxy-cgroup': expected one of auto, v2, v1, systemd, none",
        "proxy-cgroup-parent|../host|invalid value '../host' for flag '--proxy-cgroup-parent': expected a relative cgroup path without '..'",
        "proxy-memory-limit|12Mi|invalid value '12Mi' for flag '--proxy-memory-limit': expected 0 or at least 32Mi (a proxy needs ~50Mi)",
        "proxy-memory-limit|lots|invalid value 'lots' for flag '--proxy-memory-limit': expected a byte quantity such as 256Mi, 1Gi or 0",
        "proxy-pids-limit|3|invalid value '3' for flag '--proxy-pids-limit': expected 0 or 16-4096",
        "reconcile-interval|0s|invalid value '0s' for flag '--reconcile-interval': expected a duration greater than 0s",
        "proxy-upgrade|sometimes|invalid value 'sometimes' for flag '--proxy-upgrade': expected rolling or never",
        "proxy-upgrade-interval|0s|invalid value '0s' for flag '--proxy-upgrade-interval': expected a duration greater than 0s",
      })
  void badValuesNameTheFlag(String flag, String value, String message) {
    UsageException e = assertThrows(UsageException.class, () -> of(Map.of(flag, value)));
    assertEquals(message, e.getMessage());
  }

  @ParameterizedTest
  @CsvSource({
    "256Mi, 268435456",
    "1Gi, 1073741824",
    "512Ki, 524288",
    "100M, 100000000",
    "0, 0",
    "4096, 4096"
  })
  void quantities(String raw, long bytes) throws UsageException {
    assertEquals(bytes, SupervisorOptions.quantity(raw));
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * values.schema.json: a misspelt key or a wrong type fails {@code helm template} (and install and
 * upgrade) with a message naming the key, while every values file of the matrix, the Go driver's
 * chart 4.4.1's own values.yaml included, still renders.
 */
class HelmValuesSchemaTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          controller.replicaCont          | 3        | replicaCont
          controller.replicaCount         | abc      | /controller/replicaCount
          replicaCount                    | 2        | replicaCount
          node.rollingUpdat.maxSurge      | 1        | rollingUpdat
          node.rollingUpdate.maxSurg      | 1        | maxSurg
          node.updateStrategy.type        | Sometimes| /node/updateStrategy/type
          node.updateStrategy.maxSurge    | 1        | maxSurge
          node.logLevel                   | loud     | /node/logLevel
          node.healthPort                 | 70000    | /node/healthPort
          image.pullPolicy                | Sometimes| /image/pullPolicy
          sidecars.csiProvisioner.imag    | x        | imag
          controller.timeout              | 15       | /controller/timeout
          controller.podDisruptionBudget.maxUnavailabe | 1 | maxUnavailabe
          controller.serviceMonitor.enable | true    | enable
          node.serviceAccount.disableMutaton | true  | disableMutaton
          node.proxy.cgroup               | v3       | /node/proxy/cgroup
          useFIPS                         | yes      | /useFIPS
          storageClasses[0].nam           | efs      | nam
          imagePullSecrets[0].nme         | regcred  | nme
          node.hostAliases.fs-1.ip        | 10.0.0.1 | region
          defaultResources.node.limit.memory | 1Gi   | limit
          """)
  void aWrongKeyOrTypeFailsNamingIt(String key, String value, String named) {
    Exception e =
        assertThrows(Exception.class, () -> HelmChartTest.template("defaults", Map.of(key, value)));
    assertTrue(e.getMessage().contains("schema"), e.getMessage());
    assertTrue(e.getMessage().contains(named), named + " not named in: " + e.getMessage());
  }

  @ParameterizedTest
  @MethodSource("io.efscsi.it.HelmChartTest#matrix")
  void everyValuesFileOfTheMatrixValidates(String values) {
    assertFalse(HelmChartTest.template(values, Map.of()).isBlank());
  }
}

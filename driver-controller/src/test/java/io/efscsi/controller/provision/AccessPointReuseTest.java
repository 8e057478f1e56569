package io.efscsi.controller.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.ApiMetrics;
import io.efscsi.controller.cloud.Cloud.AccessPointRequest;
import io.efscsi.controller.cloud.Clouds;
import io.efscsi.emulator.EfsEmulator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.regions.Region;

/**
 * reuseAccessPoint and access points the Go driver made (token: sha256 of the claim name alone),
 * over the real AWS SDK against the EFS emulator.
 */
class AccessPointReuseTest {

  private static final String BY_NAMESPACE = "${.PVC.namespace}/${.PVC.name}";

  private EfsEmulator emu;
  private Clouds clouds;
  private AccessPointProvisioner provisioner;
  private String fs;

  @BeforeEach
  void start() throws Exception {
    emu = EfsEmulator.start();
    fs = emu.createFileSystem();
    clouds =
        new Clouds(
            new Clouds.Settings(
                Region.US_EAST_1,
                Optional.of(emu.endpoint()),
                Optional.of(emu.endpoint()),
                true,
                false,
                Optional.of(emu.endpoint())),
            new ApiMetrics(new SimpleMeterRegistry()));
    provisioner =
        new AccessPointProvisioner(
            clouds, FileSystemIds.literalOnly(), Tags.parse(""), 10_000, Duration.ofMinutes(5));
  }

  @AfterEach
  void stop() {
    clouds.close();
    emu.close();
  }

  /** What the Go driver's CreateVolume with reuseAccessPoint left on the file system. */
  private String goMade(String pvcName, String rootPath) {
    return clouds
        .defaultCloud()
        .createAccessPoint(
            new AccessPointRequest(
                AccessPointProvisioner.sha256(pvcName),
                fs,
                50001,
                50001,
                rootPath,
                "700",
                Map.of()))
        .id();
  }

  private Map<String, String> reuse(String namespace, String pvcName, String... kv) {
    Map<String, String> m = new HashMap<>();
    m.put("provisioningMode", "efs-ap");
    m.put("fileSystemId", fs);
    m.put("directoryPerms", "700");
    m.put("reuseAccessPoint", "true");
    m.put("csi.storage.k8s.io/pvc/name", pvcName);
    m.put("csi.storage.k8s.io/pvc/namespace", namespace);
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private String create(String pvName, Map<String, String> params) {
    return provisioner.create(pvName, 0, params, Map.of()).volumeId();
  }

  private DriverException refused(String pvName, Map<String, String> params) {
    return assertThrows(DriverException.class, () -> create(pvName, params));
  }

  @Test
  void aGoMadeAccessPointOfTheSameNamespaceAndClaimIsStillReused() {
    // the Go driver's UUID suffix is random, not the one this driver derives from the PV name
    String unique = goMade("data", "/shared/prod/data-" + UUID.randomUUID());
    String plain = goMade("logs", "/shared/prod/logs");
    assertEquals(
        VolumeId.format(fs, unique),
        create(
            "pvc-new-1",
            reuse("prod", "data", "basePath", "/shared", "subPathPattern", BY_NAMESPACE)));
    assertEquals(
        VolumeId.format(fs, plain),
        create(
            "pvc-new-2",
            reuse(
                "prod",
                "logs",
                "basePath",
                "/shared",
                "subPathPattern",
                BY_NAMESPACE,
                "ensureUniqueDirectory",
                "false")));
    assertEquals(2, emu.accessPointCount(fs), "nothing new was made");
  }

  @Test
  void aSameNamedClaimInAnotherNamespaceIsRefusedTheGoMadeAccessPoint() {
    String prod = goMade("data", "/prod/data-" + UUID.randomUUID());
    DriverException e = refused("pvc-evil", reuse("evil", "data", "subPathPattern", BY_NAMESPACE));
    assertEquals(DriverException.Kind.ALREADY_EXISTS, e.kind());
    assertTrue(
        e.getMessage().startsWith("Invalid existing access point " + prod + ": "), e.getMessage());
    assertTrue(
        e.getMessage().contains("claim evil/data gets under this StorageClass (/evil/data-<uuid>)"),
        e.getMessage());
    assertFalse(e.getMessage().contains("/prod"), "the other namespace's root: " + e.getMessage());
    assertEquals(1, emu.accessPointCount(fs), "and nothing was made for it");
  }

  /**
   * Without the namespace in the root directory nothing tells whose claim a Go-made access point
   * was, so even the same namespace is refused.
   */
  @Test
  void withoutTheNamespaceInThePathTheGoMadeAccessPointIsRefused() {
    Map<String, Map<String, String>> classes =
        Map.of(
            "no subPathPattern", reuse("prod", "data"),
            "name only", reuse("prod", "data", "subPathPattern", "${.PVC.name}"),
            "namespace cleaned away",
                reuse("prod", "data", "subPathPattern", "${.PVC.namespace}/../${.PVC.name}"));
    String ap = goMade("data", "/data-" + UUID.randomUUID());
    for (var c : classes.entrySet()) {
      DriverException e = refused("pvc-1", c.getValue());
      assertEquals(DriverException.Kind.ALREADY_EXISTS, e.kind(), c.getKey());
      assertTrue(
          e.getMessage().startsWith("Invalid existing access point " + ap + ": "),
          c.getKey() + ": " + e.getMessage());
      assertTrue(e.getMessage().contains("${.PVC.namespace}"), c.getKey() + ": " + e.getMessage());
    }
    assertEquals(1, emu.accessPointCount(fs));
  }

  @Test
  void withoutAGoMadeAccessPointEachNamespaceGetsItsOwn() {
    String a = create("pvc-a", reuse("a", "data", "subPathPattern", BY_NAMESPACE));
    String b = create("pvc-b", reuse("b", "data", "subPathPattern", BY_NAMESPACE));
    assertFalse(a.equals(b));
    assertEquals(a, create("pvc-a2", reuse("a", "data", "subPathPattern", BY_NAMESPACE)));
  }
}

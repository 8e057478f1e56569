package io.efscsi.controller.provision;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AccessPointPathTest {

  static ProvisioningParameters params(String... kv) {
    Map<String, String> m = new java.util.HashMap<>();
    m.put("provisioningMode", "efs-ap");
    m.put("fileSystemId", "fs-12345678");
    m.put("directoryPerms", "700");
    m.put("csi.storage.k8s.io/pvc/name", "data");
    m.put("csi.storage.k8s.io/pvc/namespace", "team-a");
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return ProvisioningParameters.parse(m);
  }

  @Test
  void anExistingAccessPointIsTheProposedOneOnlyAtTheProposedPath() {
    ProvisioningParameters p = params("basePath", "/base");
    assertTrue(AccessPointPath.proposes(p, "pvc-1", "/base/pvc-1"));
    assertFalse(AccessPointPath.proposes(p, "pvc-1", "/base/pvc-2"));
    assertFalse(AccessPointPath.proposes(p, "pvc-1", "/other/pvc-1"));
  }

  @Test
  void withUniqueDirectoriesAnySuffixOfTheGoDriverIsAccepted() {
    ProvisioningParameters p =
        params(
            "basePath", "/base",
            "subPathPattern", "${.PVC.namespace}/${.PVC.name}",
            "ensureUniqueDirectory", "true");
    String ours = AccessPointPath.of(p, "pvc-1");
    assertTrue(AccessPointPath.proposes(p, "pvc-1", ours), ours);
    // the Go driver drew its UUID at random: an access point it made for this name still matches
    assertTrue(
        AccessPointPath.proposes(
            p, "pvc-1", "/base/team-a/data-0f8fad5b-d9cb-469f-a165-70867728950e"));
    assertFalse(AccessPointPath.proposes(p, "pvc-1", "/base/team-a/data-not-a-uuid"));
    assertFalse(
        AccessPointPath.proposes(
            p, "pvc-1", "/base/team-b/data-0f8fad5b-d9cb-469f-a165-70867728950e"));
    ProvisioningParameters plain =
        params(
            "basePath", "/base",
            "subPathPattern", "${.PVC.namespace}/${.PVC.name}",
            "ensureUniqueDirectory", "false");
    assertFalse(
        AccessPointPath.proposes(
            plain, "pvc-1", "/base/team-a/data-0f8fad5b-d9cb-469f-a165-70867728950e"));
  }

  @Test
  void theRootTellsTheNamespaceOnlyWhenThePatternKeepsIt() {
    assertTrue(
        AccessPointPath.namespaced(params("subPathPattern", "${.PVC.namespace}/${.PVC.name}")));
    assertTrue(AccessPointPath.namespaced(params("subPathPattern", "ns-${.PVC.namespace}")));
    assertTrue(
        AccessPointPath.namespaced(
            params("subPathPattern", "${.PVC.namespace}/x/../${.PVC.namespace}")));
    assertFalse(AccessPointPath.namespaced(params()), "the default: the PV name");
    assertFalse(AccessPointPath.namespaced(params("subPathPattern", "${.PVC.name}")));
    assertFalse(
        AccessPointPath.namespaced(params("subPathPattern", "${.PVC.namespace}/../${.PVC.name}")));
  }
}

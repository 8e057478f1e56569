package io.efscsi.it;

import static io.efscsi.it.HelmChartTest.render;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The chart's RBAC, rule by rule: by default the node's ClusterRole is the Go driver's chart's
 * (nodes get/list/watch/patch) plus csinodes get (the startup taint, as upstream #1939) and events
 * create/patch, and every ServiceAccount is bound to nothing else; each opt-in adds exactly what
 * its values key says. ClusterRbacIT checks what a real API server makes of the same rules.
 */
class HelmRbacTest {

  /** The Go chart's node rules (v3.4.1 / chart 4.4.1), with the two we add. */
  static final Set<String> NODE_DEFAULT =
      Set.of(
          "core/nodes: get,list,patch,watch",
          "storage.k8s.io/csinodes: get",
          "core/events: create,patch");

  @Test
  void theNodeRoleIsTheGoChartsPlusTheTaintGateAndEvents() {
    assertEquals(NODE_DEFAULT, rules(render("defaults"), "efs-csi-node-role"));
    // a Go driver values file that sets disableMutation: the same without the Node patch
    assertEquals(
        Set.of(
            "core/nodes: get,list,watch",
            "storage.k8s.io/csinodes: get",
            "core/events: create,patch"),
        rules(render("go-driver-values.yaml"), "efs-csi-node-role"));
    assertEquals(NODE_DEFAULT, rules(render("upstream-4.4.1-defaults.yaml"), "efs-csi-node-role"));
  }

  @Test
  void byDefaultNoServiceAccountIsBoundToAnythingButItsOwnRoles() {
    List<HasMetadata> all = render("defaults");
    Set<String> bound = new TreeSet<>();
    for (HasMetadata o : all) {
      if (o instanceof ClusterRoleBinding b) {
        bound.add(b.getRoleRef().getName());
      }
      if (o instanceof RoleBinding b) {
        bound.add(b.getMetadata().getNamespace() + ": " + b.getRoleRef().getName());
      }
    }
    assertEquals(
        Set.of(
            "efs-csi-node-role",
            "efs-csi-external-provisioner-role",
            // the resizer: a claim's status only (issue 29)
            "efs-csi-external-resizer-role",
            // the cross-account secret, by name, in the release's namespace only
            "kube-system: efs-csi-external-provisioner-role-describe-secrets"),
        bound);
    assertEquals(
        Set.of("core/secrets [x-account]: get,list,watch"),
        rules(all, "efs-csi-external-provisioner-role-describe-secrets"));
    assertEquals(
        Set.of("core/persistentvolumeclaims/status: patch"),
        rules(all, "efs-csi-external-resizer-role"));
    // without the resizer, neither the role nor the sidecar
    List<HasMetadata> off = render("defaults", Map.of("sidecars.csiResizer.enabled", false));
    assertTrue(
        HelmChartTest.named(off, ClusterRole.class, "efs-csi-external-resizer-role").isEmpty());
    assertTrue(
        HelmChartTest.one(off, io.fabric8.kubernetes.api.model.apps.Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .stream()
            .noneMatch(c -> c.getName().equals("csi-resizer")));
    assertTrue(all.stream().noneMatch(Role.class::isInstance), "no namespaced Role by default");
  }

  @Test
  void disableMutationTakesOnlyTheNodePatchAway() {
    Set<String> locked =
        rules(
            render("defaults", Map.of("node.serviceAccount.disableMutation", true)),
            "efs-csi-node-role");
    assertEquals(
        Set.of(
            "core/nodes: get,list,watch",
            "storage.k8s.io/csinodes: get",
            "core/events: create,patch"),
        locked);
  }

  @Test
  void authenticatedMetricsAddTheAuthDelegatorAndAReaderRoleOnly() {
    List<HasMetadata> on = render("defaults", Map.of("node.metrics.enabled", true));
    assertEquals(NODE_DEFAULT, rules(on, "efs-csi-node-role"));
    ClusterRoleBinding delegator = binding(on, "efs-csi-metrics-auth-delegator");
    assertEquals("system:auth-delegator", delegator.getRoleRef().getName());
    assertEquals(
        List.of("efs-csi-node-sa"),
        delegator.getSubjects().stream().map(s -> s.getName()).toList());
    assertEquals(Set.of("nonResource/[/metrics]: get"), rules(on, "efs-csi-metrics-reader"));
    // nobody reads it until the operator names a scraper
    assertTrue(
        HelmChartTest.named(on, ClusterRoleBinding.class, "efs-csi-metrics-reader").isEmpty());
    List<HasMetadata> scraped =
        render(
            "defaults",
            Map.of(
                "node.metrics.enabled", true,
                "monitoring.metricsReader.subjects[0].kind", "ServiceAccount",
                "monitoring.metricsReader.subjects[0].name", "prometheus-k8s",
                "monitoring.metricsReader.subjects[0].namespace", "monitoring"));
    ClusterRoleBinding reader = binding(scraped, "efs-csi-metrics-reader");
    assertEquals("prometheus-k8s", reader.getSubjects().getFirst().getName());
    // the plain endpoint asks the API server nothing: no delegation
    List<HasMetadata> plain =
        render(
            "defaults",
            Map.of("node.metrics.enabled", true, "node.metrics.insecureBindAddress", "127.0.0.1"));
    assertTrue(
        HelmChartTest.named(plain, ClusterRoleBinding.class, "efs-csi-metrics-auth-delegator")
            .isEmpty());
    // the controller's secure endpoint delegates for the controller's ServiceAccount
    List<HasMetadata> controller =
        render(
            "defaults", Map.of("controller.enableMetrics", true, "controller.secureMetrics", true));
    assertEquals(
        List.of("efs-csi-controller-sa"),
        binding(controller, "efs-csi-metrics-auth-delegator").getSubjects().stream()
            .map(s -> s.getName())
            .toList());
    assertTrue(
        HelmChartTest.args(
                HelmChartTest.container(
                    HelmUpstreamControllerValuesTest.pod(controller), "efs-plugin"))
            .contains("--metrics-auth=kubernetes"));
  }

  @Test
  void fileSystemIdRefsAddConfigMapAndSecretReadsForTheControllerOnly() {
    List<HasMetadata> on = render("defaults", Map.of("controller.fileSystemIdRefs.enabled", true));
    assertEquals(NODE_DEFAULT, rules(on, "efs-csi-node-role"));
    assertEquals(
        Set.of("core/configmaps,secrets: get"), rules(on, "efs-csi-filesystem-id-reader-role"));
  }

  static ClusterRoleBinding binding(List<HasMetadata> all, String name) {
    return HelmChartTest.named(all, ClusterRoleBinding.class, name)
        .orElseThrow(() -> new AssertionError("no ClusterRoleBinding " + name));
  }

  /** A ClusterRole's rules as "group/resources: verbs" lines (verbs sorted). */
  static Set<String> rules(List<HasMetadata> all, String role) {
    ClusterRole r =
        HelmChartTest.named(all, ClusterRole.class, role)
            .orElseThrow(() -> new AssertionError("no ClusterRole " + role));
    return r.getRules().stream().map(HelmRbacTest::line).collect(Collectors.toSet());
  }

  static String line(PolicyRule p) {
    String verbs = String.join(",", new TreeSet<>(p.getVerbs()));
    if (p.getNonResourceURLs() != null && !p.getNonResourceURLs().isEmpty()) {
      return "nonResource/" + p.getNonResourceURLs() + ": " + verbs;
    }
    String group = p.getApiGroups().getFirst().isEmpty() ? "core" : p.getApiGroups().getFirst();
    String names =
        p.getResourceNames() == null || p.getResourceNames().isEmpty()
            ? ""
            : " " + p.getResourceNames();
    return group + "/" + String.join(",", p.getResources()) + names + ": " + verbs;
  }
}

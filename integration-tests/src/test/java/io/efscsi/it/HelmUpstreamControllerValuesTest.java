package io.efscsi.it;

import static io.efscsi.it.HelmChartTest.args;
import static io.efscsi.it.HelmChartTest.container;
import static io.efscsi.it.HelmChartTest.env;
import static io.efscsi.it.HelmChartTest.named;
import static io.efscsi.it.HelmChartTest.one;
import static io.efscsi.it.HelmChartTest.parse;
import static io.efscsi.it.HelmChartTest.render;
import static io.efscsi.it.HelmUpstreamValuesTest.PROVISIONER_IMAGE;
import static io.efscsi.it.HelmUpstreamValuesTest.memory;
import static io.efscsi.it.HelmUpstreamValuesTest.mounts;
import static io.efscsi.it.HelmUpstreamValuesTest.volumes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.controller.ControllerOptions;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The controller keys of the Go driver's chart 4.4.1, key by key (see {@link
 * HelmUpstreamValuesTest} for how the facts were taken).
 */
class HelmUpstreamControllerValuesTest {

  static Deployment controller(List<HasMetadata> all) {
    return one(all, Deployment.class);
  }

  static PodSpec pod(List<HasMetadata> all) {
    return controller(all).getSpec().getTemplate().getSpec();
  }

  @Test
  void workloadKeys() throws Exception {
    List<HasMetadata> defaults = render("defaults");
    List<HasMetadata> on = render("all-on.yaml");
    List<HasMetadata> off = render("all-off.yaml");
    Deployment d = controller(defaults);
    Deployment o = controller(on);
    PodSpec dpod = pod(defaults);
    PodSpec opod = pod(on);
    Container dplugin = container(dpod, "efs-plugin");
    Container oplugin = container(opod, "efs-plugin");

    // controller.create: no Deployment; the RBAC and PDB are still rendered (as there)
    assertTrue(off.stream().noneMatch(Deployment.class::isInstance));
    assertTrue(named(off, ClusterRole.class, "efs-csi-external-provisioner-role").isPresent());
    assertTrue(off.stream().anyMatch(PodDisruptionBudget.class::isInstance));
    // controller.name: the Deployment, its "app" label and selector, the PDB
    assertEquals("efs-csi-controller", d.getMetadata().getName());
    assertEquals("storage-efs-controller", o.getMetadata().getName());
    Map<String, String> selector = o.getSpec().getSelector().getMatchLabels();
    assertEquals("storage-efs-controller", selector.get("app"));
    assertEquals("efs", selector.get("app.kubernetes.io/name"));
    assertEquals("efs", selector.get("app.kubernetes.io/instance"));
    assertTrue(
        o.getSpec()
            .getTemplate()
            .getMetadata()
            .getLabels()
            .entrySet()
            .containsAll(selector.entrySet()));
    // controller.replicaCount
    assertEquals(2, d.getSpec().getReplicas());
    assertEquals(3, controller(render("production.yaml")).getSpec().getReplicas());
    // controller.logLevel: --v of the plugin and the provisioner
    assertTrue(args(oplugin).contains("--v=4"));
    assertTrue(container(opod, "csi-provisioner").getArgs().contains("--v=4"));
    // controller.extraCreateMetadata
    assertTrue(container(dpod, "csi-provisioner").getArgs().contains("--extra-create-metadata"));
    // controller.tags: --tags k:v pairs
    assertEquals(
        Map.of("environment", "prod", "team", "storage platform"),
        ControllerOptions.from(parse(oplugin)).parsedTags().values());
    assertTrue(args(dplugin).stream().noneMatch(a -> a.startsWith("--tags")));
    // controller.deleteAccessPointRootDir: the flag; the controller then mounts (root, privileged)
    assertFalse(ControllerOptions.from(parse(dplugin)).deleteAccessPointRootDir());
    assertTrue(ControllerOptions.from(parse(oplugin)).deleteAccessPointRootDir());
    assertTrue(oplugin.getSecurityContext().getPrivileged());
    assertEquals(0L, opod.getSecurityContext().getRunAsUser());
    // controller.podAnnotations, podLabels, additionalLabels
    var template = o.getSpec().getTemplate().getMetadata();
    assertEquals("storage", template.getAnnotations().get("example.com/owner"));
    assertEquals("system", template.getLabels().get("example.com/tier"));
    assertEquals("storage", o.getMetadata().getLabels().get("example.com/team"));
    // controller.hostNetwork
    assertFalse(dpod.getHostNetwork());
    assertTrue(opod.getHostNetwork());
    // controller.priorityClassName: system-cluster-critical when empty
    assertEquals("system-cluster-critical", dpod.getPriorityClassName());
    assertEquals("efs-controller-priority", opod.getPriorityClassName());
    // controller.dnsPolicy (absent when empty), dnsConfig
    assertEquals("ClusterFirst", dpod.getDnsPolicy());
    assertEquals("ClusterFirstWithHostNet", opod.getDnsPolicy());
    assertEquals("ndots", opod.getDnsConfig().getOptions().getFirst().getName());
    // controller.revisionHistoryLimit
    assertEquals(10, d.getSpec().getRevisionHistoryLimit());
    assertEquals(3, o.getSpec().getRevisionHistoryLimit());
    // controller.nodeSelector: kubernetes.io/os: linux always
    assertEquals(Map.of("kubernetes.io/os", "linux"), dpod.getNodeSelector());
    assertEquals("true", opod.getNodeSelector().get("node-role.example.com/system"));
    assertEquals("linux", opod.getNodeSelector().get("kubernetes.io/os"));
    // controller.tolerations: CriticalAddonsOnly and efs.csi.aws.com/agent-not-ready by default
    assertEquals(
        List.of("CriticalAddonsOnly", "efs.csi.aws.com/agent-not-ready"),
        dpod.getTolerations().stream().map(t -> t.getKey()).toList());
    // controller.affinity
    assertNull(dpod.getAffinity());
    assertEquals(
        100,
        opod.getAffinity()
            .getPodAntiAffinity()
            .getPreferredDuringSchedulingIgnoredDuringExecution()
            .getFirst()
            .getWeight());
    // controller.env, volumes, volumeMounts (on the plugin and the liveness sidecar)
    assertEquals("5", env(oplugin).get("AWS_MAX_ATTEMPTS").getValue());
    assertEquals("extra-ca", volumes(opod).get("extra-ca").getConfigMap().getName());
    assertEquals("/etc/extra-ca", mounts(oplugin).get("extra-ca").getMountPath());
    assertEquals(
        "/etc/extra-ca", mounts(container(opod, "liveness-probe")).get("extra-ca").getMountPath());
    // controller.socketDirVolume: emptyDir by default and when empty
    assertTrue(volumes(dpod).get("socket-dir").getEmptyDir() != null);
    assertEquals("Memory", volumes(opod).get("socket-dir").getEmptyDir().getMedium());
    // controller.healthPort: the plugin's port and the liveness sidecar's --health-port
    assertEquals(9909, dplugin.getPorts().getFirst().getContainerPort());
    assertTrue(container(opod, "liveness-probe").getArgs().contains("--health-port=9919"));
    // controller.regionalStsEndpoints
    assertFalse(env(dplugin).containsKey("AWS_STS_REGIONAL_ENDPOINTS"));
    assertEquals("regional", env(oplugin).get("AWS_STS_REGIONAL_ENDPOINTS").getValue());
    // controller.livenessProbe (period 10 s), readinessProbe, startupProbe
    assertEquals(10, dplugin.getLivenessProbe().getPeriodSeconds());
    assertEquals(20, oplugin.getLivenessProbe().getPeriodSeconds());
    assertNull(dplugin.getReadinessProbe());
    assertNull(dplugin.getStartupProbe());
    assertEquals(10, oplugin.getReadinessProbe().getPeriodSeconds());
    assertEquals(30, oplugin.getStartupProbe().getFailureThreshold());
    // controller.rollingUpdate: strategy RollingUpdate with it
    assertNull(d.getSpec().getStrategy());
    assertEquals("RollingUpdate", o.getSpec().getStrategy().getType());
    assertEquals(1, o.getSpec().getStrategy().getRollingUpdate().getMaxSurge().getIntVal());
  }

  @Test
  void provisionerAndSidecarKeys() {
    PodSpec dpod = pod(render("defaults"));
    PodSpec opod = pod(render("all-on.yaml"));
    PodSpec ppod = pod(render("production.yaml"));
    Container dprov = container(dpod, "csi-provisioner");
    Container oprov = container(opod, "csi-provisioner");
    assertEquals(PROVISIONER_IMAGE, dprov.getImage());
    assertEquals(
        "registry.example.com/mirror/csi-provisioner:v6.3.0-eksbuild.2",
        container(ppod, "csi-provisioner").getImage());
    // the Go driver's provisioner arguments, with the controller's durations and threads
    for (String a :
        List.of(
            "--feature-gates=Topology=true",
            "--leader-election",
            "--leader-election-renew-deadline=10s",
            "--leader-election-lease-duration=15s",
            "--timeout=15s",
            "--worker-threads=100")) {
      assertTrue(dprov.getArgs().contains(a), a);
    }
    for (String a :
        List.of(
            "--leader-election-renew-deadline=20s",
            "--leader-election-lease-duration=30s",
            "--timeout=60s",
            "--worker-threads=50",
            "--retry-interval-start=2s")) {
      assertTrue(oprov.getArgs().contains(a), a);
    }
    assertTrue(container(ppod, "csi-provisioner").getArgs().contains("--retry-interval-max=5m"));
    // sidecars.csiProvisioner.env (upstream's chart since v3.5.0, its PR #1924): after ADDRESS
    assertEquals(List.of("ADDRESS"), dprov.getEnv().stream().map(e -> e.getName()).toList());
    Container proxied =
        container(
            pod(
                render(
                    "defaults",
                    Map.of(
                        "sidecars.csiProvisioner.env[0].name", "HTTPS_PROXY",
                        "sidecars.csiProvisioner.env[0].value", "http://proxy.example:3128"))),
            "csi-provisioner");
    assertEquals(
        List.of("ADDRESS", "HTTPS_PROXY"),
        proxied.getEnv().stream().map(e -> e.getName()).toList());
    assertEquals("http://proxy.example:3128", env(proxied).get("HTTPS_PROXY").getValue());
    // absent keys (null in all-off.yaml, controller on) leave the provisioner's own defaults
    List<String> bare =
        container(pod(render("all-off.yaml", Map.of("controller.create", true))), "csi-provisioner")
            .getArgs();
    assertTrue(
        bare.stream().noneMatch(a -> a.startsWith("--timeout") || a.startsWith("--worker")),
        bare.toString());
    assertFalse(bare.contains("--extra-create-metadata"));
    // controller.resources reach csi-provisioner and liveness-probe when theirs are empty
    Container oplugin = container(opod, "efs-plugin");
    assertEquals("400Mi", memory(oplugin, "limits"));
    assertEquals("400Mi", memory(oprov, "limits"));
    assertEquals("400Mi", memory(container(opod, "liveness-probe"), "limits"));
    // ours: defaults when both are empty; every container has memory requests and limits
    assertEquals("500Mi", memory(dprov, "limits"));
    for (Container c : dpod.getContainers()) {
      assertTrue(memory(c, "requests") != null && memory(c, "limits") != null, c.getName());
    }
  }

  @Test
  void emptyOrAbsentControllerKeysFallBackAsThere() {
    // all-off.yaml with the controller on: the Go driver's chart's fallbacks
    PodSpec xpod = pod(render("all-off.yaml", Map.of("controller.create", true)));
    Deployment x = controller(render("all-off.yaml", Map.of("controller.create", true)));
    assertEquals("system-cluster-critical", xpod.getPriorityClassName());
    assertNull(xpod.getDnsPolicy());
    assertNull(x.getSpec().getRevisionHistoryLimit());
    assertNull(container(xpod, "efs-plugin").getLivenessProbe());
    assertTrue(xpod.getTolerations().isEmpty());
    assertTrue(volumes(xpod).get("socket-dir").getEmptyDir() != null, "emptyDir when empty");
    assertEquals("efs-csi-controller-sa", xpod.getServiceAccountName());
    assertTrue(
        args(container(xpod, "efs-plugin")).contains("--delete-access-point-root-dir=false"));
    // sidecars' own resources win over controller.resources
    PodSpec spod =
        pod(
            render(
                "all-on.yaml",
                Map.of(
                    "sidecars.csiProvisioner.resources.limits.memory", "77Mi",
                    "sidecars.livenessProbe.resources.limits.memory", "33Mi")));
    assertEquals("77Mi", memory(container(spod, "csi-provisioner"), "limits"));
    assertEquals("33Mi", memory(container(spod, "liveness-probe"), "limits"));
    // sidecars' securityContext: read-only root, no privilege escalation
    for (String name : List.of("csi-provisioner", "liveness-probe")) {
      var sc = container(pod(render("defaults")), name).getSecurityContext();
      assertTrue(sc.getReadOnlyRootFilesystem(), name);
      assertFalse(sc.getAllowPrivilegeEscalation(), name);
    }
  }

  @Test
  void securityContextsRootOnlyWhereNeeded() {
    // ours: non-root 65532 (fsGroup for the socket emptyDir), unprivileged, by default
    PodSpec dpod = pod(render("defaults"));
    var psc = dpod.getSecurityContext();
    assertTrue(psc.getRunAsNonRoot());
    assertEquals(65532L, psc.getRunAsUser());
    assertEquals(65532L, psc.getRunAsGroup());
    assertEquals(65532L, psc.getFsGroup());
    var csc = container(dpod, "efs-plugin").getSecurityContext();
    assertFalse(csc.getPrivileged());
    assertFalse(csc.getAllowPrivilegeEscalation());
    assertEquals(List.of("ALL"), csc.getCapabilities().getDrop());
    // a values file that sets them (the Go driver's values.yaml: root, privileged) is followed
    PodSpec upod = pod(render("upstream-4.4.1-defaults.yaml"));
    assertEquals(0L, upod.getSecurityContext().getRunAsUser());
    assertFalse(upod.getSecurityContext().getRunAsNonRoot());
    assertTrue(container(upod, "efs-plugin").getSecurityContext().getPrivileged());
  }

  @Test
  void serviceAccountRbacPdbAndMetricsKeys() {
    List<HasMetadata> defaults = render("defaults");
    List<HasMetadata> on = render("all-on.yaml");
    List<HasMetadata> off = render("all-off.yaml");
    List<HasMetadata> prod = render("production.yaml");
    // controller.serviceAccount.*
    assertEquals("efs-controller-sa", pod(on).getServiceAccountName());
    assertEquals(
        "arn:aws:iam::111122223333:role/efs-csi-controller",
        named(prod, ServiceAccount.class, "efs-csi-controller-sa")
            .orElseThrow()
            .getMetadata()
            .getAnnotations()
            .get("eks.amazonaws.com/role-arn"));
    assertTrue(named(off, ServiceAccount.class, "efs-csi-controller-sa").isEmpty());
    assertEquals(
        "efs-controller-sa",
        named(on, ClusterRoleBinding.class, "efs-csi-provisioner-binding")
            .orElseThrow()
            .getSubjects()
            .getFirst()
            .getName());
    // the x-account secret only, through a RoleBinding in the release namespace
    var secrets =
        named(defaults, ClusterRole.class, "efs-csi-external-provisioner-role-describe-secrets")
            .orElseThrow();
    assertEquals(List.of("x-account"), secrets.getRules().getFirst().getResourceNames());
    assertEquals(
        "kube-system",
        named(defaults, RoleBinding.class, "efs-csi-provisioner-binding-describe-secrets")
            .orElseThrow()
            .getMetadata()
            .getNamespace());
    // controller.fileSystemIdRefs.enabled: get on configmaps and secrets, its own role
    assertTrue(named(defaults, ClusterRole.class, "efs-csi-filesystem-id-reader-role").isEmpty());
    var reader = named(on, ClusterRole.class, "efs-csi-filesystem-id-reader-role").orElseThrow();
    assertEquals(List.of("configmaps", "secrets"), reader.getRules().getFirst().getResources());
    assertEquals(List.of("get"), reader.getRules().getFirst().getVerbs());
    assertTrue(
        named(on, ClusterRoleBinding.class, "efs-csi-filesystem-id-reader-role-binding")
            .isPresent());
    // controller.podDisruptionBudget.*: maxUnavailable (minAvailable: null), minAvailable,
    // unhealthyPodEvictionPolicy (IfHealthyBudget by default); selects the controller's pods
    assertTrue(defaults.stream().noneMatch(PodDisruptionBudget.class::isInstance));
    var ppdb = one(prod, PodDisruptionBudget.class);
    assertEquals(1, ppdb.getSpec().getMaxUnavailable().getIntVal());
    assertNull(ppdb.getSpec().getMinAvailable());
    assertEquals("IfHealthyBudget", ppdb.getSpec().getUnhealthyPodEvictionPolicy());
    assertEquals(
        controller(prod).getSpec().getSelector().getMatchLabels(),
        ppdb.getSpec().getSelector().getMatchLabels());
    var opdb = one(on, PodDisruptionBudget.class);
    assertEquals("storage-efs-controller", opdb.getMetadata().getName());
    assertEquals(1, opdb.getSpec().getMinAvailable().getIntVal());
    assertEquals("AlwaysAllow", opdb.getSpec().getUnhealthyPodEvictionPolicy());
    assertEquals(
        controller(on).getSpec().getSelector().getMatchLabels(),
        opdb.getSpec().getSelector().getMatchLabels());
    // controller.topologySpreadConstraints: each gets a labelSelector matching the controller pods
    for (List<HasMetadata> all : List.of(prod, on)) {
      var labels = controller(all).getSpec().getTemplate().getMetadata().getLabels();
      for (var tsc : pod(all).getTopologySpreadConstraints()) {
        assertTrue(
            labels.entrySet().containsAll(tsc.getLabelSelector().getMatchLabels().entrySet()));
        assertEquals(
            controller(all).getSpec().getSelector().getMatchLabels(),
            tsc.getLabelSelector().getMatchLabels());
      }
    }
    assertEquals(2, pod(prod).getTopologySpreadConstraints().size());
    assertEquals(
        "example.com/tier",
        pod(on)
            .getTopologySpreadConstraints()
            .getFirst()
            .getLabelSelector()
            .getMatchExpressions()
            .getFirst()
            .getKey());
    // controller.enableMetrics: --http-endpoint, port 3301, Service efs-csi-controller;
    // enablePrometheusAnnotations (default true): prometheus.io annotations;
    // serviceMonitor.enabled: a ServiceMonitor efs-csi-controller scraping every 15 s
    // (the node's efs-csi-node-metrics Service is on by default: HelmMonitoringTest)
    assertTrue(named(defaults, Service.class, "efs-csi-controller").isEmpty());
    Container oplugin = container(pod(on), "efs-plugin");
    assertTrue(args(oplugin).contains("--http-endpoint=0.0.0.0:3301"));
    assertTrue(oplugin.getPorts().stream().anyMatch(p -> p.getContainerPort() == 3301));
    Service service = named(on, Service.class, "efs-csi-controller").orElseThrow();
    assertEquals(3301, service.getSpec().getPorts().getFirst().getPort());
    var podLabels = controller(on).getSpec().getTemplate().getMetadata().getLabels();
    assertTrue(podLabels.entrySet().containsAll(service.getSpec().getSelector().entrySet()));
    var annotations = controller(on).getSpec().getTemplate().getMetadata().getAnnotations();
    assertEquals("true", annotations.get("prometheus.io/scrape"));
    assertEquals("3301", annotations.get("prometheus.io/port"));
    var noAnnotations =
        controller(render("all-on.yaml", Map.of("controller.enablePrometheusAnnotations", false)))
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations();
    assertFalse(noAnnotations.containsKey("prometheus.io/scrape"));
    GenericKubernetesResource monitor =
        HelmChartTest.custom(on, "ServiceMonitor", "efs-csi-controller");
    assertEquals("efs-csi-controller", monitor.getMetadata().getName());
    assertEquals("prometheus", monitor.getMetadata().getLabels().get("release"));
    @SuppressWarnings("unchecked")
    Map<String, String> match =
        (Map<String, String>)
            ((Map<String, Object>)
                    ((Map<String, Object>) monitor.getAdditionalProperties().get("spec"))
                        .get("selector"))
                .get("matchLabels");
    assertTrue(service.getMetadata().getLabels().entrySet().containsAll(match.entrySet()));
    @SuppressWarnings("unchecked")
    var endpoint =
        ((List<Map<String, Object>>)
                ((Map<String, Object>) monitor.getAdditionalProperties().get("spec"))
                    .get("endpoints"))
            .getFirst();
    assertEquals("15s", endpoint.get("interval"));
    assertEquals("metrics", endpoint.get("port"));
  }
}

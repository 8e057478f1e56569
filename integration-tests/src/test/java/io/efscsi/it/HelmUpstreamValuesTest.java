package io.efscsi.it;

import static io.efscsi.it.HelmChartTest.args;
import static io.efscsi.it.HelmChartTest.container;
import static io.efscsi.it.HelmChartTest.env;
import static io.efscsi.it.HelmChartTest.named;
import static io.efscsi.it.HelmChartTest.one;
import static io.efscsi.it.HelmChartTest.parse;
import static io.efscsi.it.HelmChartTest.render;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.config.CommonOptions;
import io.efscsi.node.NodeOptions;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The node side and the top-level keys of the Go driver's chart 4.4.1, key by key: each assertion
 * is the behaviour that chart's templates give the key (read from its source at tag
 * helm-chart-aws-efs-csi-driver-4.4.1, written down here as facts), or, where ours differs on
 * purpose, ours (docs/install.md lists those). The controller's keys are in {@link
 * HelmUpstreamControllerValuesTest}.
 */
class HelmUpstreamValuesTest {

  // Facts of the Go driver's chart 4.4.1 (values.yaml and templates).
  static final String LIVENESS_IMAGE =
      "public.ecr.aws/csi-components/livenessprobe:v2.19.0-eksbuild.3";
  static final String REGISTRAR_IMAGE =
      "public.ecr.aws/csi-components/csi-node-driver-registrar:v2.17.0-eksbuild.3";
  static final String PROVISIONER_IMAGE =
      "public.ecr.aws/csi-components/csi-provisioner:v6.3.0-eksbuild.2";

  static DaemonSet node(List<HasMetadata> all) {
    return one(all, DaemonSet.class);
  }

  static PodSpec nodePod(List<HasMetadata> all) {
    return node(all).getSpec().getTemplate().getSpec();
  }

  static Map<String, Volume> volumes(PodSpec pod) {
    return pod.getVolumes().stream().collect(Collectors.toMap(Volume::getName, v -> v));
  }

  static Map<String, VolumeMount> mounts(Container c) {
    return c.getVolumeMounts().stream().collect(Collectors.toMap(VolumeMount::getName, m -> m));
  }

  static ResourceRequirements resources(String requestMemory, String limitMemory) {
    return new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
        .addToRequests("memory", new Quantity(requestMemory))
        .addToLimits("memory", new Quantity(limitMemory))
        .build();
  }

  static String memory(Container c, String kind) {
    Map<String, Quantity> m =
        kind.equals("limits") ? c.getResources().getLimits() : c.getResources().getRequests();
    return m == null || m.get("memory") == null ? null : m.get("memory").toString();
  }

  @Test
  void topLevelKeys() throws Exception {
    List<HasMetadata> defaults = render("defaults");
    List<HasMetadata> on = render("all-on.yaml");
    PodSpec dpod = nodePod(defaults);
    PodSpec opod = nodePod(on);
    Container dplugin = container(dpod, "efs-plugin");
    Container oplugin = container(opod, "efs-plugin");

    // nameOverride: app.kubernetes.io/name of every object and selector
    assertEquals(
        "aws-efs-csi-driver",
        node(defaults).getSpec().getSelector().getMatchLabels().get("app.kubernetes.io/name"));
    assertEquals(
        "efs", node(on).getSpec().getSelector().getMatchLabels().get("app.kubernetes.io/name"));
    assertEquals("efs", node(on).getMetadata().getLabels().get("app.kubernetes.io/name"));
    // fullnameOverride: defined by the chart's helpers, used by no object name
    assertTrue(on.stream().noneMatch(o -> o.getMetadata().getName().contains("efs-full")));
    // useFIPS: AWS_USE_FIPS_ENDPOINT=true on the node (and controller) plugin
    assertFalse(env(dplugin).containsKey("AWS_USE_FIPS_ENDPOINT"));
    assertEquals("true", env(oplugin).get("AWS_USE_FIPS_ENDPOINT").getValue());
    // portRangeUpperBound: PORT_RANGE_UPPER_BOUND (ours: also the top of the proxy port range)
    assertEquals("21049", env(dplugin).get("PORT_RANGE_UPPER_BOUND").getValue());
    assertEquals("20999", env(oplugin).get("PORT_RANGE_UPPER_BOUND").getValue());
    assertEquals(20999, NodeOptions.from(parse(oplugin)).supervisor().config().portUpper());
    // debugLogs: --debug-logs on the plugin (sidecars keep --v=logLevel)
    assertTrue(args(dplugin).contains("--debug-logs=false"));
    assertTrue(args(oplugin).contains("--debug-logs=true"));
    assertEquals(5, CommonOptions.from(parse(oplugin)).verbosity());
    assertTrue(container(opod, "csi-driver-registrar").getArgs().contains("--v=5"));
    // image.*: repository:tag (tag default: the chart's appVersion; a number is a tag too)
    assertTrue(dplugin.getImage().endsWith(":0.1.0"), dplugin.getImage());
    assertTrue(oplugin.getImage().endsWith(":7"), oplugin.getImage());
    PodSpec ppod = nodePod(render("production.yaml"));
    assertEquals(
        "registry.example.com/storage/efs-csi:1.2.3", container(ppod, "efs-plugin").getImage());
    assertEquals("Always", container(ppod, "efs-plugin").getImagePullPolicy());
    assertEquals("IfNotPresent", dplugin.getImagePullPolicy());
    // imagePullSecrets: names become LocalObjectReferences (ours also takes {name: ...})
    assertEquals(List.of(new LocalObjectReference("regcred")), ppod.getImagePullSecrets());
    assertEquals(
        List.of(new LocalObjectReference("regcred"), new LocalObjectReference("second")),
        opod.getImagePullSecrets());
    assertTrue(dpod.getImagePullSecrets().isEmpty());
  }

  @Test
  void sidecarKeys() {
    PodSpec dpod = nodePod(render("defaults"));
    PodSpec ppod = nodePod(render("production.yaml"));
    PodSpec opod = nodePod(render("all-on.yaml"));
    // sidecars.*.image: the Go driver's chart 4.4.1's repositories and tags by default
    assertEquals(LIVENESS_IMAGE, container(dpod, "liveness-probe").getImage());
    assertEquals(REGISTRAR_IMAGE, container(dpod, "csi-driver-registrar").getImage());
    assertEquals(
        "registry.example.com/mirror/livenessprobe:v2.19.0-eksbuild.3",
        container(ppod, "liveness-probe").getImage());
    assertEquals(
        "registry.example.com/mirror/csi-node-driver-registrar:v2.17.0-eksbuild.3",
        container(ppod, "csi-driver-registrar").getImage());
    assertEquals("Never", container(opod, "liveness-probe").getImagePullPolicy());
    assertEquals("example.com/ndr:v2", container(opod, "csi-driver-registrar").getImage());
    // sidecars.*.securityContext: read-only root, no privilege escalation by default
    var sc = container(dpod, "csi-driver-registrar").getSecurityContext();
    assertTrue(sc.getReadOnlyRootFilesystem());
    assertFalse(sc.getAllowPrivilegeEscalation());
    // a file's securityContext is merged into the default one by Helm, as there
    assertFalse(
        container(opod, "csi-driver-registrar").getSecurityContext().getAllowPrivilegeEscalation());
    // sidecars.*.resources on the node: as set; ours: a default when empty
    assertEquals("20Mi", memory(container(opod, "csi-driver-registrar"), "limits"));
    assertEquals("100Mi", memory(container(dpod, "csi-driver-registrar"), "limits"));
    assertEquals("100Mi", memory(container(dpod, "liveness-probe"), "limits"));
    PodSpec spod =
        nodePod(
            render("defaults", Map.of("sidecars.livenessProbe.resources.limits.memory", "33Mi")));
    assertEquals("33Mi", memory(container(spod, "liveness-probe"), "limits"));
    // every container has memory requests and limits (ours)
    for (Container c : dpod.getContainers()) {
      assertTrue(memory(c, "requests") != null && memory(c, "limits") != null, c.getName());
    }
  }

  @Test
  void nodeKeys() throws Exception {
    List<HasMetadata> defaults = render("defaults");
    List<HasMetadata> on = render("all-on.yaml");
    List<HasMetadata> off = render("all-off.yaml");
    DaemonSet dnode = node(defaults);
    DaemonSet onode = node(on);
    PodSpec dpod = nodePod(defaults);
    PodSpec opod = nodePod(on);
    PodSpec xpod = nodePod(off);
    Container dplugin = container(dpod, "efs-plugin");
    Container oplugin = container(opod, "efs-plugin");

    // node.logLevel: --v of the plugin and both sidecars
    assertTrue(args(dplugin).contains("--v=2"));
    assertTrue(container(dpod, "liveness-probe").getArgs().contains("--v=2"));
    assertTrue(args(oplugin).contains("--v=5"));
    // node.volMetrics*: flags
    NodeOptions dno = NodeOptions.from(parse(dplugin));
    NodeOptions ono = NodeOptions.from(parse(oplugin));
    assertFalse(dno.volMetricsOptIn());
    assertTrue(ono.volMetricsOptIn());
    assertTrue(args(oplugin).contains("--vol-metrics-refresh-period=30"));
    assertTrue(args(oplugin).contains("--vol-metrics-fs-rate-limit=10"));
    // keys the Go driver's chart reads with defaults when absent (null in all-off.yaml)
    for (String a :
        List.of(
            "--vol-metrics-opt-in=false",
            "--vol-metrics-refresh-period=240",
            "--vol-metrics-fs-rate-limit=5",
            "--max-inflight-mount-calls-opt-in=false",
            "--max-inflight-mount-calls=10",
            "--volume-attach-limit-opt-in=false",
            "--volume-attach-limit=20",
            "--force-unmount-after-timeout=false",
            "--unmount-timeout=30s",
            "--efs-cloudwatch-log-enabled=false",
            "--s3files-cloudwatch-log-enabled=true",
            "--s3files-cloudwatch-metrics-enabled=true")) {
      assertTrue(args(container(xpod, "efs-plugin")).contains(a), a);
      assertTrue(args(dplugin).contains(a), a);
    }
    for (String a :
        List.of(
            "--max-inflight-mount-calls-opt-in=true",
            "--max-inflight-mount-calls=25",
            "--volume-attach-limit-opt-in=true",
            "--volume-attach-limit=30",
            "--force-unmount-after-timeout=true",
            "--unmount-timeout=45s",
            "--efs-cloudwatch-log-enabled=true",
            "--s3files-cloudwatch-log-enabled=false",
            "--s3files-cloudwatch-metrics-enabled=false",
            "--efs-utils-conf-overrides=mount-watchdog:stunnel_health_check_interval_min=1",
            "--s3files-utils-conf-overrides=proxy:read_bypass_denylist_size=20000")) {
      assertTrue(args(oplugin).contains(a), a);
    }
    assertEquals(25, ono.maxInflightMountCalls().orElseThrow());
    assertTrue(args(dplugin).stream().noneMatch(a -> a.startsWith("--efs-utils-conf-overrides")));
    // node.hostAliases: <fs-id>.efs.<region>.amazonaws.com -> ip
    assertEquals(
        "fs-0123456789abcdef0.efs.us-west-2.amazonaws.com",
        opod.getHostAliases().getFirst().getHostnames().getFirst());
    assertEquals("10.0.1.15", opod.getHostAliases().getFirst().getIp());
    assertTrue(dpod.getHostAliases().isEmpty());
    // node.priorityClassName: as set; empty: none (no fallback in the Go driver's chart)
    assertEquals("system-node-critical", dpod.getPriorityClassName());
    assertEquals("efs-node-priority", opod.getPriorityClassName());
    assertNull(xpod.getPriorityClassName());
    // node.dnsPolicy, node.dnsConfig
    assertEquals("ClusterFirst", dpod.getDnsPolicy());
    assertEquals("None", opod.getDnsPolicy());
    assertEquals(List.of("169.254.169.253"), opod.getDnsConfig().getNameservers());
    // node.podLabels, podAnnotations, additionalLabels
    assertEquals(
        "node", onode.getSpec().getTemplate().getMetadata().getLabels().get("example.com/tier"));
    assertEquals(
        "storage",
        onode.getSpec().getTemplate().getMetadata().getAnnotations().get("example.com/owner"));
    assertEquals("storage", onode.getMetadata().getLabels().get("example.com/team"));
    // node.resources: the plugin's (ours: a default when empty)
    assertEquals("300Mi", memory(oplugin, "limits"));
    assertEquals("128Mi", memory(oplugin, "requests"));
    assertTrue(memory(dplugin, "limits") != null);
    // node.revisionHistoryLimit: a number, or absent
    assertEquals(10, dnode.getSpec().getRevisionHistoryLimit());
    assertEquals(5, onode.getSpec().getRevisionHistoryLimit());
    assertNull(node(off).getSpec().getRevisionHistoryLimit());
    // node.nodeSelector: always kubernetes.io/os: linux, plus the file's
    assertEquals(Map.of("kubernetes.io/os", "linux"), dpod.getNodeSelector());
    assertEquals(
        Map.of("kubernetes.io/os", "linux", "node.example.com/efs", "true"),
        opod.getNodeSelector());
    // node.tolerations: [operator: Exists] by default
    assertEquals("Exists", dpod.getTolerations().getFirst().getOperator());
    assertNull(dpod.getTolerations().getFirst().getKey());
    assertTrue(xpod.getTolerations().isEmpty());
    assertEquals("dedicated", opod.getTolerations().getFirst().getKey());
    // node.affinity: not on fargate or hybrid nodes by default
    var term =
        dpod.getAffinity()
            .getNodeAffinity()
            .getRequiredDuringSchedulingIgnoredDuringExecution()
            .getNodeSelectorTerms()
            .getFirst()
            .getMatchExpressions()
            .getFirst();
    assertEquals("eks.amazonaws.com/compute-type", term.getKey());
    assertEquals(List.of("fargate", "hybrid"), term.getValues());
    assertNull(xpod.getAffinity());
    // node.serviceAccount.*: the SA (created or not), its name and annotations; disableMutation
    // drops the Node patch verb and sets DISABLE_TAINT_WATCHER
    assertEquals("efs-csi-node-sa", dpod.getServiceAccountName());
    assertEquals("efs-node-sa", opod.getServiceAccountName());
    assertEquals(
        "arn:aws:iam::111122223333:role/efs-csi-node",
        named(on, ServiceAccount.class, "efs-node-sa")
            .orElseThrow()
            .getMetadata()
            .getAnnotations()
            .get("eks.amazonaws.com/role-arn"));
    assertTrue(named(off, ServiceAccount.class, "efs-csi-node-sa").isEmpty());
    ClusterRole role = named(defaults, ClusterRole.class, "efs-csi-node-role").orElseThrow();
    assertTrue(role.getRules().getFirst().getVerbs().contains("patch"));
    assertFalse(env(dplugin).containsKey("DISABLE_TAINT_WATCHER"));
    List<HasMetadata> prod = render("production.yaml");
    ClusterRole locked = named(prod, ClusterRole.class, "efs-csi-node-role").orElseThrow();
    // disableMutation: the Node is never patched (events on pods are not a mutation of the node)
    assertTrue(
        locked.getRules().stream()
            .filter(r -> r.getResources().contains("nodes"))
            .noneMatch(r -> r.getVerbs().contains("patch")));
    assertTrue(
        locked.getRules().stream()
            .anyMatch(r ->
                r.getResources().equals(List.of("events"))
                    && r.getVerbs().containsAll(List.of("create", "patch"))),
        "events on pods (the takeover): " + locked.getRules());
    assertEquals(
        "true",
        env(container(nodePod(prod), "efs-plugin")).get("DISABLE_TAINT_WATCHER").getValue());
    // node.healthPort: the plugin's healthz port and the liveness sidecar's --health-port
    assertEquals(9809, dplugin.getPorts().getFirst().getContainerPort());
    assertEquals(9819, oplugin.getPorts().getFirst().getContainerPort());
    assertTrue(container(opod, "liveness-probe").getArgs().contains("--health-port=9819"));
    // node.livenessProbe (period 2 s by default), readinessProbe, startupProbe
    assertEquals(2, dplugin.getLivenessProbe().getPeriodSeconds());
    assertEquals(5, oplugin.getLivenessProbe().getPeriodSeconds());
    assertNull(container(xpod, "efs-plugin").getLivenessProbe());
    // empty (the Go chart's default): ours, on /healthz (HelmChartTest has the details)
    assertEquals("/healthz", dplugin.getReadinessProbe().getHttpGet().getPath());
    assertEquals(120, dplugin.getStartupProbe().getFailureThreshold());
    assertEquals("/healthz", oplugin.getReadinessProbe().getHttpGet().getPath());
    assertEquals(30, oplugin.getStartupProbe().getFailureThreshold());
    // node.securityContext: the pod's (root by default)
    assertEquals(0L, dpod.getSecurityContext().getRunAsUser());
    assertNull(xpod.getSecurityContext());
    // node.env, volumes, volumeMounts: appended
    assertEquals("1", env(oplugin).get("EXTRA").getValue());
    assertEquals("/opt/extra", volumes(opod).get("extra").getHostPath().getPath());
    assertEquals("/opt/extra", mounts(oplugin).get("extra").getMountPath());
    // node.kubeletPath: kubelet dir (Bidirectional), plugin and registration dirs
    assertEquals("/var/lib/k0s/kubelet", volumes(opod).get("kubelet-dir").getHostPath().getPath());
    assertEquals("Bidirectional", mounts(oplugin).get("kubelet-dir").getMountPropagation());
    assertEquals("/var/lib/k0s/kubelet", mounts(oplugin).get("kubelet-dir").getMountPath());
    assertEquals(
        Path.of("/var/lib/k0s/kubelet"),
        NodeOptions.from(parse(oplugin)).kubeletRootDir(),
        "the node confines staging and target paths to it");
    assertEquals(
        "/var/lib/k0s/kubelet/plugins/efs.csi.aws.com/",
        volumes(opod).get("plugin-dir").getHostPath().getPath());
    assertEquals(
        "/var/lib/k0s/kubelet/plugins_registry/",
        volumes(opod).get("registration-dir").getHostPath().getPath());
    assertEquals(
        "/var/lib/k0s/kubelet/plugins/efs.csi.aws.com/csi.sock",
        env(container(opod, "csi-driver-registrar")).get("DRIVER_REG_SOCK_PATH").getValue());
    // node.rollingUpdate: updateStrategy RollingUpdate with it
    assertNull(dnode.getSpec().getUpdateStrategy());
    var strategy = node(prod).getSpec().getUpdateStrategy();
    assertEquals("RollingUpdate", strategy.getType());
    assertEquals("20%", strategy.getRollingUpdate().getMaxUnavailable().getStrVal());
    assertEquals(0, strategy.getRollingUpdate().getMaxSurge().getIntVal());
    assertEquals(
        2, onode.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable().getIntVal());
  }

  @Test
  void nodeLayoutAndTheGoDriversStateForTheTakeover() throws Exception {
    PodSpec pod = nodePod(render("defaults"));
    Container plugin = container(pod, "efs-plugin");
    // the Go driver's chart's node: hostNetwork, privileged plugin, CSI_NODE_MEMORY_LIMIT
    assertTrue(pod.getHostNetwork());
    assertTrue(plugin.getSecurityContext().getPrivileged());
    var memoryLimit = env(plugin).get("CSI_NODE_MEMORY_LIMIT").getValueFrom().getResourceFieldRef();
    assertEquals("limits.memory", memoryLimit.getResource());
    assertEquals("efs-plugin", memoryLimit.getContainerName());
    // ours: the heap of the JVM follows the container's memory limit
    assertEquals(
        "limits.memory",
        env(plugin).get("EFS_CSI_MEMORY_LIMIT").getValueFrom().getResourceFieldRef().getResource());
    // ours: hostPID, the proxies' state dir and the host's cgroups
    assertTrue(pod.getHostPID(), "proxies outlive the plugin container");
    NodeOptions no = NodeOptions.from(parse(plugin));
    assertEquals(Path.of("/var/run/efs-csi"), no.stateDir());
    assertEquals(Path.of("/var/lib/kubelet"), no.kubeletRootDir());
    assertEquals(20049, no.supervisor().config().portLower());
    assertEquals(Path.of("/host/sys/fs/cgroup"), no.supervisor().cgroupRoot());
    assertEquals("unix:///csi/csi.sock", CommonOptions.from(parse(plugin)).endpoint().toString());
    Map<String, Volume> volumes = volumes(pod);
    assertEquals("/var/run/efs-csi", volumes.get("proxy-state").getHostPath().getPath());
    assertEquals("/sys/fs/cgroup", volumes.get("host-cgroup").getHostPath().getPath());
    // the Go driver's volumes, same names and host paths, read-only here (the takeover reads them)
    Map<String, VolumeMount> mounts = mounts(plugin);
    for (String[] v :
        List.of(
            new String[] {"efs-state-dir", "/var/run/efs", "/var/run/efs"},
            new String[] {"efs-utils-config", "/var/amazon/efs", "/var/amazon/efs"},
            new String[] {
              "efs-utils-config-legacy", "/etc/amazon/efs", "/etc/amazon/efs-legacy"
            })) {
      assertEquals(v[1], volumes.get(v[0]).getHostPath().getPath(), v[0]);
      assertEquals("DirectoryOrCreate", volumes.get(v[0]).getHostPath().getType(), v[0]);
      assertEquals(v[2], mounts.get(v[0]).getMountPath(), v[0]);
      assertTrue(mounts.get(v[0]).getReadOnly(), v[0]);
    }
  }

  @Test
  void storageClassesAndTheCsiDriver() {
    List<HasMetadata> prod = render("production.yaml");
    var sc =
        named(prod, io.fabric8.kubernetes.api.model.storage.StorageClass.class, "efs-sc")
            .orElseThrow();
    assertEquals("efs.csi.aws.com", sc.getProvisioner());
    assertEquals(
        "true",
        sc.getMetadata().getAnnotations().get("storageclass.kubernetes.io/is-default-class"));
    assertEquals("efs-ap", sc.getParameters().get("provisioningMode"));
    // the API takes strings only: the Go driver's chart renders an invalid object here
    assertEquals("true", sc.getParameters().get("ensureUniqueDirectory"));
    assertEquals("Delete", sc.getReclaimPolicy());
    assertEquals("Immediate", sc.getVolumeBindingMode());
    var statik =
        named(prod, io.fabric8.kubernetes.api.model.storage.StorageClass.class, "efs-static")
            .orElseThrow();
    assertEquals(List.of("tls", "iam"), statik.getMountOptions());
    assertEquals("Retain", statik.getReclaimPolicy());
    assertEquals("WaitForFirstConsumer", statik.getVolumeBindingMode());
    assertTrue(statik.getParameters().isEmpty());
    var all =
        named(
                render("all-on.yaml"),
                io.fabric8.kubernetes.api.model.storage.StorageClass.class,
                "efs-all")
            .orElseThrow();
    assertEquals("1000", all.getParameters().get("uid"));
    assertTrue(all.getAllowVolumeExpansion());

    // useHelmHooksForCSIDriver: true: a pre-install/pre-upgrade hook (not in the manifest);
    // false: a plain object. Kept on uninstall either way (helm.sh/resource-policy: keep).
    assertTrue(render("defaults").stream().noneMatch(CSIDriver.class::isInstance));
    CSIDriver driver = one(render("all-off.yaml"), CSIDriver.class);
    assertEquals("efs.csi.aws.com", driver.getMetadata().getName());
    assertEquals(false, driver.getSpec().getAttachRequired());
    assertNull(driver.getSpec().getFsGroupPolicy(), "the API default, as the Go driver");
    assertEquals("keep", driver.getMetadata().getAnnotations().get("helm.sh/resource-policy"));
    assertFalse(driver.getMetadata().getAnnotations().containsKey("helm.sh/hook"));
  }
}

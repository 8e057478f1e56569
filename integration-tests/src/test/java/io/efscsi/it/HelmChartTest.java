package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.controller.ControllerOptions;
import io.efscsi.node.NodeOptions;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart (deploy/helm/aws-efs-csi-driver), linted and rendered by helm itself, with our
 * defaults and with a values file written for the Go driver's chart. The efs-plugin containers'
 * arguments go through the launcher's own flag parsing, so the chart can never pass a flag or value
 * the driver refuses.
 */
class HelmChartTest {

  static final Path CHART = Path.of("../deploy/helm/aws-efs-csi-driver");
  static final KubernetesSerialization YAML = new KubernetesSerialization();

  /**
   * The chart's manifests. Hooks (the CSIDriver with {@code useHelmHooksForCSIDriver}) are not in
   * helm-java's rendering, as they are not in a release's manifest.
   */
  static List<HasMetadata> render(Path values) {
    return render(values, Map.of());
  }

  static List<HasMetadata> render(Path values, Map<String, Object> set) {
    var template =
        new Helm(CHART)
            .template()
            .withName("efs")
            .withNamespace("kube-system")
            .withKubeVersion("1.31.0");
    if (values != null) {
      template = template.withValuesFile(values);
    }
    for (var e : set.entrySet()) {
      template = template.set(e.getKey(), e.getValue());
    }
    List<HasMetadata> out = new ArrayList<>();
    for (String doc : template.call().split("(?m)^---\\s*$")) {
      if (doc.lines().anyMatch(l -> l.startsWith("kind:"))) {
        out.add(YAML.unmarshal(doc));
      }
    }
    return out;
  }

  static <T extends HasMetadata> T one(List<HasMetadata> all, Class<T> type) {
    List<T> found = all.stream().filter(type::isInstance).map(type::cast).toList();
    assertEquals(1, found.size(), type.getSimpleName() + ": " + found);
    return found.getFirst();
  }

  static Container container(PodSpec pod, String name) {
    return pod.getContainers().stream()
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name));
  }

  /** The container's arguments with $(VAR) from its env expanded, as the kubelet does. */
  static List<String> args(Container c) {
    Map<String, String> env =
        c.getEnv().stream()
            .filter(e -> e.getValue() != null)
            .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    List<String> out = new ArrayList<>();
    for (String a : c.getArgs()) {
      for (var e : env.entrySet()) {
        a = a.replace("$(" + e.getKey() + ")", e.getValue());
      }
      out.add(a);
    }
    return out;
  }

  /** Parses an efs-plugin container's arguments as bin/efs-csi does. */
  static Flags parse(Container c) throws Exception {
    List<String> a = args(c);
    return new FlagSet()
        .addAll(CommonOptions.FLAGS)
        .addAll(ControllerOptions.FLAGS)
        .addAll(NodeOptions.FLAGS)
        .parse(a.subList(1, a.size()));
  }

  static ClusterRole nodeRole(List<HasMetadata> all) {
    return all.stream()
        .filter(ClusterRole.class::isInstance)
        .map(ClusterRole.class::cast)
        .filter(r -> r.getMetadata().getName().equals("efs-csi-node-role"))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void lintsCleanInStrictMode() {
    LintResult lint = new Helm(CHART).lint().strict().call();
    assertFalse(lint.isFailed(), String.join("\n", lint.getMessages()));
  }

  @Test
  void defaultsKeepTheGoDriversContractAndOurNodeLayout() throws Exception {
    List<HasMetadata> all = render(null);
    assertTrue(all.stream().noneMatch(CSIDriver.class::isInstance), "a hook by default");

    CSIDriver driver =
        one(render(null, Map.of("useHelmHooksForCSIDriver", false)), CSIDriver.class);
    assertEquals("efs.csi.aws.com", driver.getMetadata().getName());
    assertEquals(false, driver.getSpec().getAttachRequired());
    assertEquals(null, driver.getSpec().getFsGroupPolicy(), "the API default, as the Go driver");
    assertFalse(driver.getMetadata().getAnnotations().containsKey("helm.sh/hook"));

    Deployment controller = one(all, Deployment.class);
    assertEquals("efs-csi-controller", controller.getMetadata().getName());
    assertEquals(2, controller.getSpec().getReplicas());
    PodSpec cpod = controller.getSpec().getTemplate().getSpec();
    assertEquals("efs-csi-controller-sa", cpod.getServiceAccountName());
    Container cplugin = container(cpod, "efs-plugin");
    assertEquals("controller", cplugin.getArgs().getFirst());
    ControllerOptions co = ControllerOptions.from(parse(cplugin));
    assertFalse(co.deleteAccessPointRootDir());
    assertEquals(
        "unix:///var/lib/csi/sockets/pluginproxy/csi.sock",
        CommonOptions.from(parse(cplugin)).endpoint().toString());
    List<String> provisioner = container(cpod, "csi-provisioner").getArgs();
    for (String a :
        List.of(
            "--feature-gates=Topology=true",
            "--extra-create-metadata",
            "--leader-election",
            "--timeout=15s",
            "--worker-threads=100")) {
      assertTrue(provisioner.contains(a), a + " in " + provisioner);
    }

    DaemonSet node = one(all, DaemonSet.class);
    PodSpec npod = node.getSpec().getTemplate().getSpec();
    assertTrue(npod.getHostNetwork(), "proxies listen on the host's 127.0.0.1");
    assertTrue(npod.getHostPID(), "proxies outlive the plugin container");
    assertEquals("efs-csi-node-sa", npod.getServiceAccountName());
    Container nplugin = container(npod, "efs-plugin");
    assertTrue(nplugin.getSecurityContext().getPrivileged());
    assertEquals("node", nplugin.getArgs().getFirst());
    NodeOptions no = NodeOptions.from(parse(nplugin));
    assertEquals(Path.of("/var/run/efs-csi"), no.stateDir());
    assertEquals(20049, no.supervisor().config().portLower());
    assertEquals(21049, no.supervisor().config().portUpper());
    assertEquals(Path.of("/host/sys/fs/cgroup"), no.supervisor().cgroupRoot());
    assertEquals("unix:///csi/csi.sock", CommonOptions.from(parse(nplugin)).endpoint().toString());
    var kubelet =
        nplugin.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals("/var/lib/kubelet"))
            .findFirst()
            .orElseThrow();
    assertEquals("Bidirectional", kubelet.getMountPropagation());
    Map<String, String> hostPaths =
        npod.getVolumes().stream()
            .filter(v -> v.getHostPath() != null)
            .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
    assertEquals("/var/run/efs-csi", hostPaths.get("proxy-state"));
    assertEquals("/sys/fs/cgroup", hostPaths.get("host-cgroup"));
    assertEquals(
        "/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock",
        container(npod, "csi-driver-registrar").getEnv().stream()
            .filter(e -> e.getName().equals("DRIVER_REG_SOCK_PATH"))
            .findFirst()
            .orElseThrow()
            .getValue());

    ClusterRole nodeRole = nodeRole(all);
    assertTrue(nodeRole.getRules().getFirst().getVerbs().contains("patch"), "taint removal");
    assertTrue(all.stream().noneMatch(StorageClass.class::isInstance));
  }

  @Test
  void aValuesFileOfTheGoDriversChartRendersTheSameIntent() throws Exception {
    Path values = Path.of(HelmChartTest.class.getResource("/helm/go-driver-values.yaml").toURI());
    List<HasMetadata> all = render(values);

    Deployment controller = one(all, Deployment.class);
    assertEquals(3, controller.getSpec().getReplicas());
    PodSpec cpod = controller.getSpec().getTemplate().getSpec();
    Container cplugin = container(cpod, "efs-plugin");
    Flags cflags = parse(cplugin);
    ControllerOptions co = ControllerOptions.from(cflags);
    assertTrue(co.deleteAccessPointRootDir());
    assertEquals(
        Map.of("team", "storage platform", "cost:center", "42"),
        co.parsedTags().values(),
        "tags with spaces and colons survive the chart's escaping");
    assertEquals(List.of(), co.parsedTags().skipped());
    // the cleanup mounts need the node's flags, which the launcher reads in controller mode too
    NodeOptions cleanup = NodeOptions.from(cflags);
    assertEquals(20999, cleanup.supervisor().config().portUpper());
    assertEquals("0.0.0.0:3301", cflags.string("http-endpoint"));
    assertEquals(5, cflags.integer("v"));
    Set<String> env =
        cplugin.getEnv().stream()
            .map(e -> e.getName() + "=" + e.getValue())
            .collect(Collectors.toSet());
    assertTrue(env.contains("AWS_USE_FIPS_ENDPOINT=true"), env.toString());
    assertTrue(env.contains("AWS_STS_REGIONAL_ENDPOINTS=regional"), env.toString());
    assertEquals(
        "true",
        controller
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations()
            .get("prometheus.io/scrape"));
    assertTrue(all.stream().anyMatch(r -> r.getKind().equals("ServiceMonitor")), "ServiceMonitor");
    assertTrue(all.stream().anyMatch(r -> r.getKind().equals("PodDisruptionBudget")), "the PDB");

    DaemonSet node = one(all, DaemonSet.class);
    PodSpec npod = node.getSpec().getTemplate().getSpec();
    NodeOptions no = NodeOptions.from(parse(container(npod, "efs-plugin")));
    assertTrue(no.volMetricsOptIn());
    assertEquals(25, no.maxInflightMountCalls().orElseThrow());
    assertEquals(
        "fs-0123456789abcdef0.efs.us-west-2.amazonaws.com",
        npod.getHostAliases().getFirst().getHostnames().getFirst());
    assertEquals("10.0.1.15", npod.getHostAliases().getFirst().getIp());
    assertTrue(
        npod.getVolumes().stream()
            .anyMatch(v ->
                v.getHostPath() != null
                    && v.getHostPath().getPath().equals("/var/lib/k0s/kubelet/plugins_registry/")));

    ClusterRole nodeRole = nodeRole(all);
    assertFalse(nodeRole.getRules().getFirst().getVerbs().contains("patch"), "disableMutation");

    StorageClass sc = one(all, StorageClass.class);
    assertEquals("efs.csi.aws.com", sc.getProvisioner());
    assertEquals("${.PVC.namespace}/${.PVC.name}", sc.getParameters().get("subPathPattern"));
    assertEquals(List.of("tls"), sc.getMountOptions());
    assertEquals("Delete", sc.getReclaimPolicy());
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
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
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Helm chart (deploy/helm/aws-efs-csi-driver), linted and rendered by helm itself for a matrix
 * of values files (our defaults, files written for the Go driver's chart 4.4.1 including its own
 * values.yaml, every toggle on, every toggle off). Every rendered object must be one the Kubernetes
 * API accepts (its published schema, unknown fields refused), and the efs-plugin containers'
 * arguments go through the launcher's own flag parsing, so the chart can never pass a flag or value
 * the driver refuses. What each values key does is checked in {@link HelmUpstreamValuesTest}.
 */
class HelmChartTest {

  static final Path CHART = Path.of("../deploy/helm/aws-efs-csi-driver");
  static final KubernetesSerialization YAML = new KubernetesSerialization();
  private static final ObjectMapper RAW = new ObjectMapper(new YAMLFactory());

  /** The values files of the matrix; "defaults" is the chart's own values.yaml alone. */
  static Stream<String> matrix() {
    return Stream.of(
        "defaults",
        "production.yaml",
        "all-on.yaml",
        "all-off.yaml",
        "go-driver-values.yaml",
        "upstream-4.4.1-defaults.yaml");
  }

  static Path valuesFile(String name) {
    try {
      return Path.of(HelmChartTest.class.getResource("/helm/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(name, e);
    }
  }

  /** helm template of the chart (release "efs" in kube-system, Kubernetes 1.31). */
  static String template(String values, Map<String, Object> set) {
    var template =
        new Helm(CHART)
            .template()
            .withName("efs")
            .withNamespace("kube-system")
            .withKubeVersion("1.31.0");
    if (values != null && !values.equals("defaults")) {
      template = template.withValuesFile(valuesFile(values));
    }
    if (values != null && values.startsWith("upstream-") && !set.containsKey("image.repository")) {
      // A copy of the Go chart's values names the Go image, which the chart refuses
      // (anUpstreamValuesFileStillNamingTheGoImageIsRefused): the one change docs/migration.md
      // tells an operator to make to it.
      template = template.set("image.repository", "efs-csi-java/efs-csi").set("image.tag", "");
    }
    for (var e : set.entrySet()) {
      template = template.set(e.getKey(), e.getValue());
    }
    return template.call();
  }

  static List<String> documents(String rendered) {
    return Stream.of(rendered.split("(?m)^---\\s*$"))
        .filter(doc -> doc.lines().anyMatch(l -> l.startsWith("kind:")))
        .toList();
  }

  /**
   * The chart's manifests as fabric8 objects. Hooks (the CSIDriver with {@code
   * useHelmHooksForCSIDriver}) are not in helm-java's rendering, as they are not in a release's
   * manifest.
   */
  static List<HasMetadata> render(String values) {
    return render(values, Map.of());
  }

  static List<HasMetadata> render(String values, Map<String, Object> set) {
    List<HasMetadata> out = new ArrayList<>();
    for (String doc : documents(template(values, set))) {
      out.add(YAML.unmarshal(doc));
    }
    return out;
  }

  static <T extends HasMetadata> T one(List<HasMetadata> all, Class<T> type) {
    List<T> found = all.stream().filter(type::isInstance).map(type::cast).toList();
    assertEquals(1, found.size(), type.getSimpleName() + ": " + found);
    return found.getFirst();
  }

  static <T extends HasMetadata> Optional<T> named(
      List<HasMetadata> all, Class<T> type, String name) {
    return all.stream()
        .filter(type::isInstance)
        .map(type::cast)
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst();
  }

  /** The custom resource (ServiceMonitor, PrometheusRule…) of this kind and name. */
  static io.fabric8.kubernetes.api.model.GenericKubernetesResource custom(
      List<HasMetadata> all, String kind, String name) {
    return all.stream()
        .filter(io.fabric8.kubernetes.api.model.GenericKubernetesResource.class::isInstance)
        .map(io.fabric8.kubernetes.api.model.GenericKubernetesResource.class::cast)
        .filter(r -> r.getKind().equals(kind) && r.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  static Container container(PodSpec pod, String name) {
    return pod.getContainers().stream()
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name));
  }

  static Map<String, EnvVar> env(Container c) {
    return c.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e));
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

  @Test
  void lintsCleanInStrictMode() {
    LintResult lint = new Helm(CHART).lint().strict().call();
    assertFalse(lint.isFailed(), String.join("\n", lint.getMessages()));
  }

  @ParameterizedTest
  @MethodSource("matrix")
  void everyRenderedObjectIsOneTheKubernetesApiAccepts(String values) throws IOException {
    List<String> docs = documents(template(values, Map.of()));
    assertFalse(docs.isEmpty());
    List<String> errors = new ArrayList<>();
    for (String doc : docs) {
      JsonNode object = RAW.readTree(doc);
      errors.addAll(KubernetesSchemas.get().errors(object));
    }
    assertEquals(List.of(), errors, values + ": objects the API server would refuse");
  }

  @ParameterizedTest
  @MethodSource("matrix")
  void everyEfsPluginArgumentIsOneTheLauncherAccepts(String values) throws Exception {
    List<HasMetadata> all = render(values);
    for (DaemonSet node :
        all.stream().filter(DaemonSet.class::isInstance).map(DaemonSet.class::cast).toList()) {
      Container plugin = container(node.getSpec().getTemplate().getSpec(), "efs-plugin");
      assertEquals("node", plugin.getArgs().getFirst());
      Flags flags = parse(plugin);
      NodeOptions.from(flags);
      CommonOptions.from(flags);
    }
    for (Deployment controller :
        all.stream().filter(Deployment.class::isInstance).map(Deployment.class::cast).toList()) {
      Container plugin = container(controller.getSpec().getTemplate().getSpec(), "efs-plugin");
      assertEquals("controller", plugin.getArgs().getFirst());
      Flags flags = parse(plugin);
      ControllerOptions.from(flags);
      CommonOptions.from(flags);
      if (ControllerOptions.from(flags).deleteAccessPointRootDir()) {
        NodeOptions.from(flags); // the cleanup mounts read the node's proxy flags
      }
    }
  }

  /** Rolling proxy upgrades are on by default and the values pace them or turn them off. */
  @Test
  void proxyUpgradesRollByDefaultAndCanBePacedOrTurnedOff() {
    List<String> defaults =
        args(
            container(
                one(render("defaults"), DaemonSet.class).getSpec().getTemplate().getSpec(),
                "efs-plugin"));
    assertTrue(
        defaults.containsAll(
            List.of(
                "--proxy-upgrade=rolling",
                "--proxy-upgrade-delay=60s",
                "--proxy-upgrade-interval=10s")),
        defaults::toString);
    List<String> never =
        args(
            container(
                one(
                        render(
                            "defaults",
                            Map.of(
                                "node.proxy.upgrade", "never",
                                "node.proxy.upgradeInterval", "30s")),
                        DaemonSet.class)
                    .getSpec()
                    .getTemplate()
                    .getSpec(),
                "efs-plugin"));
    assertTrue(
        never.containsAll(List.of("--proxy-upgrade=never", "--proxy-upgrade-interval=30s")),
        never::toString);
    String refused = refusal(Map.of("node.proxy.upgrade", "sometimes"));
    assertTrue(refused.contains("/node/proxy/upgrade': value must be one of"), refused);
  }

  /**
   * docs/migration.md paces a migration with {@code node.updateStrategy}: OnDelete renders (a
   * node's pod is replaced only when deleted), a RollingUpdate with its own rollingUpdate renders,
   * the Go chart's {@code node.rollingUpdate} still works alone, and the two contradictions fail
   * with a message that says what to set.
   */
  @Test
  void theNodeRollIsPacedAsTheMigrationGuideSays() {
    DaemonSet onDelete =
        one(render("defaults", Map.of("node.updateStrategy.type", "OnDelete")), DaemonSet.class);
    assertEquals("OnDelete", onDelete.getSpec().getUpdateStrategy().getType());
    assertEquals(null, onDelete.getSpec().getUpdateStrategy().getRollingUpdate());
    DaemonSet paced =
        one(
            render(
                "defaults",
                Map.of(
                    "node.updateStrategy.type", "RollingUpdate",
                    "node.updateStrategy.rollingUpdate.maxUnavailable", "1")),
            DaemonSet.class);
    assertEquals("RollingUpdate", paced.getSpec().getUpdateStrategy().getType());
    assertEquals(
        1, paced.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable().getIntVal());
    DaemonSet upstream =
        one(
            render("defaults", Map.of("node.rollingUpdate.maxUnavailable", "10%")),
            DaemonSet.class);
    assertEquals(
        "10%",
        upstream.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable().getStrVal());
    String both =
        refusal(
            Map.of("node.updateStrategy.type", "OnDelete", "node.rollingUpdate.maxUnavailable", 1));
    assertTrue(both.contains("node.updateStrategy and node.rollingUpdate are both set"), both);
    String onDeleteWithRoll =
        refusal(
            Map.of(
                "node.updateStrategy.type",
                "OnDelete",
                "node.updateStrategy.rollingUpdate.maxUnavailable",
                1));
    assertTrue(onDeleteWithRoll.contains("OnDelete takes no rollingUpdate"), onDeleteWithRoll);
  }

  /** The message of helm template's refusal of the defaults with {@code set}. */
  static String refusal(Map<String, Object> set) {
    return refusal("defaults", set);
  }

  private static String refusal(String values, Map<String, Object> set) {
    return org.junit.jupiter.api.Assertions.assertThrows(
            Exception.class, () -> template(values, set))
        .getMessage();
  }

  /**
   * A values file copied from the Go driver's chart names the Go driver's image, which cannot run
   * this chart's arguments: the install fails saying what to change, for each of the Go image's
   * homes (public ECR, Docker Hub, EKS' regional ECR); ours and a private registry's render.
   */
  @Test
  void anUpstreamValuesFileStillNamingTheGoImageIsRefused() {
    for (String go :
        List.of(
            "public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver",
            "amazon/aws-efs-csi-driver",
            "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efs-csi-driver")) {
      String refused = refusal("defaults", Map.of("image.repository", go));
      assertTrue(
          refused.contains("image.repository " + go + " is the Go driver's image")
              && refused.contains("Remove image.repository and image.tag"),
          refused);
    }
    String unchanged =
        org.junit.jupiter.api.Assertions.assertThrows(
                Exception.class,
                () ->
                    new Helm(CHART)
                        .template()
                        .withName("efs")
                        .withNamespace("kube-system")
                        .withKubeVersion("1.31.0")
                        .withValuesFile(valuesFile("upstream-4.4.1-defaults.yaml"))
                        .call())
            .getMessage();
    assertTrue(
        unchanged.contains(
            "image.repository public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver is the Go"
                + " driver's image"),
        unchanged);
    DaemonSet mirrored =
        one(
            render(
                "defaults",
                Map.of("image.repository", "registry.example.com/mirror/efs-csi-java-aws-efs-csi")),
            DaemonSet.class);
    assertTrue(
        container(mirrored.getSpec().getTemplate().getSpec(), "efs-plugin")
            .getImage()
            .startsWith("registry.example.com/mirror/efs-csi-java-aws-efs-csi:"));
  }

  /**
   * A memory limit below the measured need (Go-sized resources in a copied values file) fails the
   * install naming the key, the limit and the need, for each plugin container, in every unit form;
   * acknowledgeLowMemoryLimits installs it anyway; a limit at the need renders.
   */
  @Test
  void aMemoryLimitBelowTheMeasuredNeedIsRefusedUnlessAcknowledged() {
    for (String low : List.of("128Mi", "150M", "0.1Gi", "134217728")) {
      String node = refusal(Map.of("node.resources.limits.memory", low));
      assertTrue(
          node.contains("node plugin (efs-csi-node, efs-plugin) has a memory limit of " + low)
              && node.contains("below the 160Mi")
              && node.contains("node.resources.limits.memory")
              && node.contains("acknowledgeLowMemoryLimits"),
          node);
    }
    String controller = refusal(Map.of("controller.resources.limits.memory", "200Mi"));
    assertTrue(controller.contains("below the 256Mi"), controller);
    assertTrue(controller.contains("controller.resources.limits.memory"), controller);
    one(
        render(
            "defaults",
            Map.of("node.resources.limits.memory", "128Mi", "acknowledgeLowMemoryLimits", "true")),
        DaemonSet.class);
    one(render("defaults", Map.of("node.resources.limits.memory", "160Mi")), DaemonSet.class);
    // no controller, no controller check
    one(
        render(
            "defaults",
            Map.of("controller.create", "false", "controller.resources.limits.memory", "64Mi")),
        DaemonSet.class);
  }

  /**
   * The node pod turns Ready through CSI Probe (the liveness-probe sidecar's /healthz), which
   * answers ready only after the first takeover pass: with the Go chart's empty probes the chart
   * renders its own readiness and startup probes there; given ones are kept as given.
   */
  @Test
  void theNodePodIsReadyOnlyThroughCsiProbeUnlessProbesAreGiven() {
    var plugin =
        container(
            one(render("defaults"), DaemonSet.class).getSpec().getTemplate().getSpec(),
            "efs-plugin");
    assertEquals("/healthz", plugin.getReadinessProbe().getHttpGet().getPath());
    assertEquals("healthz", plugin.getReadinessProbe().getHttpGet().getPort().getStrVal());
    assertEquals("/healthz", plugin.getStartupProbe().getHttpGet().getPath());
    assertEquals(
        600,
        plugin.getStartupProbe().getPeriodSeconds()
            * plugin.getStartupProbe().getFailureThreshold());
    var given =
        container(
            one(
                    render("defaults", Map.of("node.readinessProbe.exec.command[0]", "true")),
                    DaemonSet.class)
                .getSpec()
                .getTemplate()
                .getSpec(),
            "efs-plugin");
    assertEquals(List.of("true"), given.getReadinessProbe().getExec().getCommand());
    assertEquals(null, given.getReadinessProbe().getHttpGet());
  }

  @Test
  void theSchemaCheckFindsWhatTheApiServerRefuses() throws IOException {
    // What the Go driver's chart renders for imagePullSecrets: [regcred] and an unquoted
    // StorageClass parameter: objects an API server refuses. The check must see both.
    JsonNode pod =
        RAW.readTree(
            """
            apiVersion: apps/v1
            kind: DaemonSet
            metadata: {name: broken}
            spec:
              selector: {matchLabels: {app: x}}
              template:
                metadata: {labels: {app: x}}
                spec:
                  imagePullSecrets: [regcred]
                  containers: [{name: c, image: i, resource: {}}]
            """);
    List<String> errors = KubernetesSchemas.get().errors(pod);
    assertTrue(
        errors.stream()
            .anyMatch(e -> e.contains("DaemonSet/broken") && e.contains("imagePullSecrets")),
        errors.toString());
    assertTrue(errors.stream().anyMatch(e -> e.contains("resource")), errors.toString());
    JsonNode sc =
        RAW.readTree(
            """
            apiVersion: storage.k8s.io/v1
            kind: StorageClass
            metadata: {name: efs-sc}
            provisioner: efs.csi.aws.com
            parameters: {ensureUniqueDirectory: true}
            """);
    List<String> scErrors = KubernetesSchemas.get().errors(sc);
    assertTrue(
        scErrors.stream()
            .anyMatch(
                e -> e.contains("StorageClass/efs-sc") && e.contains("ensureUniqueDirectory")),
        scErrors.toString());
  }
}

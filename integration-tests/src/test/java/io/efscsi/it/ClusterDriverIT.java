package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.it.cluster.Cluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.CSINode;
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
 * A volume's life on the real cluster with the chart installed ({@link ClusterDriver}): the
 * external-provisioner and kubelet drive the plugin, pods share data, a claim grows online, the
 * plugin container is killed and upgraded (the proxies outlive both), and an {@code OnDelete} roll
 * waits for the operator. The docs' commands run in {@link ClusterRunbookIT}, on a cluster of its
 * own.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterDriverIT extends ClusterDriverFixture {

  static final String DRIVER = ClusterDriver.DRIVER;
  static final String NS = ClusterDriver.NS;

  @Test
  @Order(1)
  void theNodeRegistersTheDriverWithItsInstanceIdAndLiftsTheTaint() {
    CSINode csiNode =
        d.admin
            .storage()
            .v1()
            .csiNodes()
            .withName("localhost")
            .waitUntilCondition(
                n ->
                    n != null
                        && n.getSpec().getDrivers() != null
                        && !n.getSpec().getDrivers().isEmpty(),
                60,
                TimeUnit.SECONDS);
    var driver = csiNode.getSpec().getDrivers().getFirst();
    assertEquals(DRIVER, driver.getName());
    assertEquals(Cluster.INSTANCE_ID, driver.getNodeID());
    assertEquals(List.of("topology.kubernetes.io/zone"), driver.getTopologyKeys(), "" + driver);
    d.admin
        .nodes()
        .withName("localhost")
        .waitUntilCondition(
            n ->
                n.getSpec().getTaints() == null
                    || n.getSpec().getTaints().stream()
                        .noneMatch(t -> t.getKey().equals("efs.csi.aws.com/agent-not-ready")),
            60,
            TimeUnit.SECONDS);
  }

  @Test
  @Order(2)
  void aClaimIsProvisionedWrittenByOnePodAndReadByAnother() throws Exception {
    d.admin.resource(ClusterDriverSupport.claim("data", Map.of(), "5Gi")).create();
    var pvc =
        d.admin
            .persistentVolumeClaims()
            .inNamespace("default")
            .withName("data")
            .waitUntilCondition(
                c -> c != null && "Bound".equals(c.getStatus().getPhase()), 120, TimeUnit.SECONDS);
    var pv = d.admin.persistentVolumes().withName(pvc.getSpec().getVolumeName()).get();
    String handle = pv.getSpec().getCsi().getVolumeHandle();
    // the form EKS Fargate's mounter accepts (no efs: prefix), as the Go driver v3.5.0 writes it
    assertTrue(handle.matches(d.fsId + "::fsap-[0-9a-f]{17}"), handle);
    String ap = handle.substring(handle.indexOf("::") + 2);
    assertTrue(d.efs.accessPoint(ap).isPresent(), "the access point is in the emulator: " + ap);

    d.runPod("writer", "data", "echo written-by-writer > /data/hello && sync && sleep 3600");
    d.awaitLog("writer", "");
    String read = d.execIn("writer", "/bin/cat", "/data/hello");
    assertEquals("written-by-writer\n", read);
    d.runPod("reader", "data", "cat /data/hello; sleep 3600");
    d.awaitLog("reader", "written-by-writer");
  }

  @Test
  @Order(9)
  void deletingThePodsUnpublishesAndDeletingTheClaimDeletesTheAccessPoint() throws Exception {
    var pv =
        d.admin.persistentVolumes().list().getItems().stream()
            .filter(v ->
                v.getSpec().getClaimRef() != null
                    && "data".equals(v.getSpec().getClaimRef().getName()))
            .findFirst()
            .orElseThrow();
    String handle = pv.getSpec().getCsi().getVolumeHandle();
    String ap = handle.substring(handle.indexOf("::") + 2);
    for (String p : List.of("writer", "reader", "static-writer")) {
      d.admin.pods().inNamespace("default").withName(p).withGracePeriod(1).delete();
    }
    for (String p : List.of("writer", "reader", "static-writer")) {
      d.admin
          .pods()
          .inNamespace("default")
          .withName(p)
          .waitUntilCondition(x -> x == null, 120, TimeUnit.SECONDS);
    }
    assertFalse(
        Files.readString(Path.of("/proc/self/mountinfo"))
            .contains(pv.getMetadata().getName() + "/mount"),
        "no pod's target of the volume is left mounted");
    d.admin.persistentVolumeClaims().inNamespace("default").withName("data").delete();
    d.admin
        .persistentVolumes()
        .withName(pv.getMetadata().getName())
        .waitUntilCondition(x -> x == null, 120, TimeUnit.SECONDS);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (d.efs.accessPoint(ap).isPresent() && System.nanoTime() < end) {
      Thread.sleep(250);
    }
    assertFalse(d.efs.accessPoint(ap).isPresent(), "the access point is deleted: " + ap);
  }

  /**
   * {@code kubectl patch pvc data} to a larger size while its pods write (issue #668 of the Go
   * driver: a refused or hanging resize): the real external-resizer calls ControllerExpandVolume,
   * the claim and its PV show the new size with no node step left, the access point's capacity tag
   * says it, and the pods keep running.
   */
  @Test
  @Order(3)
  void aClaimInUseGrowsOnline() throws Exception {
    // volumes.md's command, as printed
    var patched = d.ok(DocCommands.inline("volumes.md", "kubectl patch pvc data"));
    assertTrue(patched.output().contains("persistentvolumeclaim/data patched"), "" + patched);
    var grown = new io.fabric8.kubernetes.api.model.Quantity("20Gi");
    var pvc =
        d.admin
            .persistentVolumeClaims()
            .inNamespace("default")
            .withName("data")
            .waitUntilCondition(
                c ->
                    c != null
                        && c.getStatus().getCapacity() != null
                        && grown.equals(c.getStatus().getCapacity().get("storage")),
                120,
                TimeUnit.SECONDS);
    assertTrue(
        pvc.getStatus().getConditions() == null
            || pvc.getStatus().getConditions().stream()
                .noneMatch(c -> c.getType().equals("FileSystemResizePending")),
        "no node step is left: " + pvc.getStatus());
    var pv = d.admin.persistentVolumes().withName(pvc.getSpec().getVolumeName()).get();
    assertEquals(grown, pv.getSpec().getCapacity().get("storage"));
    String handle = pv.getSpec().getCsi().getVolumeHandle();
    String ap = handle.substring(handle.indexOf("::") + 2);
    @SuppressWarnings("unchecked")
    var tags =
        (java.util.List<Map<String, Object>>) d.efs.accessPoint(ap).orElseThrow().get("Tags");
    assertTrue(
        tags.contains(
            Map.of("Key", "efs.csi.aws.com/requested-capacity-bytes", "Value", "21474836480")),
        "" + tags);
    for (String pod : java.util.List.of("writer", "reader")) {
      assertEquals(
          "Running",
          d.admin.pods().inNamespace("default").withName(pod).get().getStatus().getPhase());
    }
  }

  @Test
  @Order(3)
  void aStaticVolumeWithAnUpstreamHandleMountsItsPath() throws Exception {
    Files.createDirectories(d.test.resolve("root/static"));
    // the mount target DNS-name form the Go driver v3.5.0 accepts again (its PR #1946); it does
    // not resolve here, so the node finds the mount target as for any handle
    d.staticClaim("static", d.fsId + ".efs.us-east-1.amazonaws.com:/static");
    d.runPod("static-writer", "static-claim", "echo static > /data/from-static && sleep 3600");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Path written = d.test.resolve("root/static/from-static");
    while (!Files.exists(written) && System.nanoTime() < end) {
      Thread.sleep(250);
    }
    assertEquals("static\n", Files.readString(written), "the pod wrote into the handle's path");
  }

  /**
   * The node pod turns Ready through CSI Probe (the chart's readiness probe on the liveness-probe
   * sidecar's /healthz), so not before the plugin's first takeover pass is done: its Ready
   * condition changed no earlier than the log line that says so (without the gate the pod is Ready
   * when the container starts, before the JVM has even logged).
   */
  @Test
  @Order(1)
  void theNodePodIsReadyOnlyOnceItsFirstTakeoverPassIsDone() {
    ClusterDriverSupport.assertReadyOnlyAfterTheFirstPass(d.admin, d.nodePod());
  }

  @Test
  @Order(5)
  void aKilledPluginContainerIsRestartedAndAdoptsItsProxies() throws Exception {
    java.util.Set<Long> before = d.proxies();
    assertEquals(2, before.size(), "one proxy per volume: " + before);
    Pod pod = d.nodePod();
    List<Long> plugin =
        ClusterDriverSupport.pidsWith(
            "io.efscsi.launcher.Main", "--kubelet-root-dir=" + d.cluster.kubeletDir());
    assertEquals(1, plugin.size(), "the node plugin's JVM: " + plugin);
    assertTrue(ProcessHandle.of(plugin.getFirst()).orElseThrow().destroyForcibly());
    d.admin
        .pods()
        .inNamespace(NS)
        .withName(pod.getMetadata().getName())
        .waitUntilCondition(
            p ->
                p.getStatus().getContainerStatuses().stream()
                    .anyMatch(c ->
                        c.getName().equals("efs-plugin")
                            && c.getRestartCount() >= 1
                            && Boolean.TRUE.equals(c.getReady())),
            120,
            TimeUnit.SECONDS);
    assertEquals(before, d.proxies(), "the same proxies, adopted, none restarted");
    var csiNode = d.admin.storage().v1().csiNodes().withName("localhost").get();
    assertEquals(DRIVER, csiNode.getSpec().getDrivers().getFirst().getName(), "still registered");
    assertEquals("written-by-writer\n", d.execIn("reader", "/bin/cat", "/data/hello"));
  }

  @Test
  @Order(6)
  void anUpgradeThatChangesTheNodePodLeavesTheProxiesAndServesAuthenticatedMetrics()
      throws Exception {
    java.util.Set<Long> before = d.proxies();
    String oldPod = d.nodePod().getMetadata().getUid();
    d.createScraper();
    // the release's values from helm itself (docs/migration.md), node metrics turned on
    d.helm.upgradeWithItsOwnValues("node.metrics.enabled=true");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (System.nanoTime() < end) {
      var pods = d.admin.pods().inNamespace(NS).withLabel("app", "efs-csi-node").list().getItems();
      if (pods.size() == 1
          && !pods.getFirst().getMetadata().getUid().equals(oldPod)
          && pods.getFirst().getStatus().getContainerStatuses().stream()
              .allMatch(c -> Boolean.TRUE.equals(c.getReady()))) {
        break;
      }
      Thread.sleep(500);
    }
    assertFalse(d.nodePod().getMetadata().getUid().equals(oldPod), "a new node pod");
    assertEquals(before, d.proxies(), "the upgrade left every proxy running");
    String token = d.scraperToken(600);
    String url = "https://127.0.0.1:3302/metrics";
    // Ready is CSI Probe's answer; the metrics listener may come a moment after it: wait for it
    long listening = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (var socket = new java.net.Socket("127.0.0.1", 3302)) {
        break;
      } catch (java.io.IOException e) {
        if (System.nanoTime() > listening) {
          throw new AssertionError("the node plugin never listened on 3302", e);
        }
        Thread.sleep(250);
      }
    }
    assertEquals(401, ClusterRbacIT.scrape(url, null).statusCode());
    var ok = ClusterRbacIT.scrape(url, token);
    assertEquals(200, ok.statusCode(), ok.body());
    assertTrue(ok.body().contains("efs_csi_"), ok.body());
  }

  /**
   * docs/migration.md's slowest pace: with {@code node.updateStrategy: {type: OnDelete}}, an
   * upgrade that changes the node pod leaves the running pod, its proxies and mounts alone until
   * the operator deletes the pod with the command the docs give; its replacement turns Ready only
   * after its first takeover pass, and adopts every proxy.
   */
  @Test
  @Order(8)
  void withOnDeleteTheNodePodIsReplacedOnlyWhenTheOperatorDeletesIt() throws Exception {
    Pod old = d.nodePod();
    java.util.Set<Long> before = d.proxies();
    d.helm.upgradeWithItsOwnValues(
        "node.updateStrategy.type=OnDelete", "node.podAnnotations.efs-csi-test/roll=on-delete");
    var ds = d.admin.apps().daemonSets().inNamespace(NS).withName("efs-csi-node");
    assertEquals("OnDelete", ds.get().getSpec().getUpdateStrategy().getType());
    // the controller has seen the new template: the running pod is the one not updated
    ds.waitUntilCondition(
        d ->
            d.getStatus().getObservedGeneration() != null
                && d.getStatus().getObservedGeneration() >= d.getMetadata().getGeneration()
                // 0 is left out of the JSON (omitempty)
                && java.util.Objects.requireNonNullElse(
                        d.getStatus().getUpdatedNumberScheduled(), 0)
                    == 0,
        60,
        TimeUnit.SECONDS);
    // a RollingUpdate's controller deletes the old pod in the sync that records the generation
    // (observed above); a few seconds more cover its next sync
    Thread.sleep(3_000);
    assertEquals(old.getMetadata().getUid(), d.nodePod().getMetadata().getUid(), "left alone");
    assertEquals(before, d.proxies());
    // the command docs/migration.md gives, through kubectl as the operator runs it
    String name = old.getMetadata().getName();
    String delete =
        DocCommands.inline("migration.md", "kubectl -n kube-system delete pod ")
            .replaceAll("<[^>]+>", name);
    var deleted = d.run(delete);
    assertEquals(0, deleted.exit(), delete + ": " + deleted);
    assertTrue(deleted.output().contains("pod \"" + name + "\" deleted"), deleted.output());
    ds.waitUntilCondition(
        d ->
            Integer.valueOf(1).equals(d.getStatus().getUpdatedNumberScheduled())
                && Integer.valueOf(1).equals(d.getStatus().getNumberReady()),
        180,
        TimeUnit.SECONDS);
    Pod replacement = d.nodePod();
    assertFalse(replacement.getMetadata().getUid().equals(old.getMetadata().getUid()));
    assertEquals("on-delete", replacement.getMetadata().getAnnotations().get("efs-csi-test/roll"));
    ClusterDriverSupport.assertReadyOnlyAfterTheFirstPass(d.admin, replacement);
    assertEquals(before, d.proxies(), "the replacement adopted every proxy");
  }
}

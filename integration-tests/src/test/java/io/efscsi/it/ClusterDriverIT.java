package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.emulator.EfsEmulator;
import io.efscsi.it.cluster.Cluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The chart installed as an operator installs it ({@code helm install} of deploy/helm with the
 * project's own image and sidecar images made from the shared binaries) into the one-node {@link
 * Cluster}, and the volume's life driven by the real external-provisioner and kubelet: the EFS API
 * is the project's emulator, the mount target a TLS server in front of nfs-ganesha, and the NFS
 * mount command the stand-in (this kernel has no NFS client; the kernel VM suite keeps the real
 * one), which bind-mounts one directory as the file system's root so that pods share data.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterDriverIT {

  static final String NS = "kube-system";
  static final String DRIVER = "efs.csi.aws.com";

  static Cluster cluster;
  static KubernetesClient admin;
  static NfsLab lab;
  static EfsEmulator efs;
  static String fsId;
  static Path work;
  static Path test;
  static ClusterHelm helm;
  static int tlsPort;
  static final List<String> phases = new ArrayList<>();

  @BeforeAll
  static void install() throws Exception {
    long t0 = System.nanoTime();
    ClusterHostPaths.recordBefore();
    cluster = Cluster.start();
    admin = cluster.admin();
    // as a node group bootstrapped for the driver starts (upstream's startup taint)
    admin
        .nodes()
        .withName("localhost")
        .edit(n ->
            new io.fabric8.kubernetes.api.model.NodeBuilder(n)
                .editSpec()
                .addNewTaint()
                .withKey("efs.csi.aws.com/agent-not-ready")
                .withEffect("NoExecute")
                .endTaint()
                .endSpec()
                .build());
    phase("cluster up", t0);
    work = Files.createTempDirectory("efscsi-cluster-driver");
    long t1 = System.nanoTime();
    phases.add(
        String.format(
            "images built and imported: %.1f s", ClusterImages.buildAndImport(cluster, work)));
    lab = new NfsLab(Files.createDirectories(work.resolve("lab")), 1);
    efs = EfsEmulator.start();
    fsId = efs.createFileSystem();
    efs.addMountTarget(fsId, Cluster.ZONE, "127.0.0.1");
    String name = fsId + ".efs.us-east-1.amazonaws.com";
    lab.selfSigned("mt", name);
    tlsPort = NfsLab.freePort();
    lab.stunnelServer(tlsPort, lab.dir.resolve("mt.crt"), lab.dir.resolve("mt.key"));
    NfsLab.awaitPort(tlsPort, java.time.Duration.ofSeconds(10));
    // what the node container sees under the kubelet directory it mounts
    test = Files.createDirectories(cluster.kubeletDir().resolve("efs-test"));
    Files.createDirectories(test.resolve("root"));
    Files.copy(lab.dir.resolve("mt.crt"), test.resolve("ca.crt"));
    Path mount = test.resolve("fake-nfs-mount");
    try (var in = ClusterDriverIT.class.getResourceAsStream("/fake-nfs-mount")) {
      Files.write(mount, in.readAllBytes());
    }
    Files.setPosixFilePermissions(mount, PosixFilePermissions.fromString("rwxr-xr-x"));
    helm = new ClusterHelm(cluster, work);
    helm.install(ClusterDriverSupport.values(tlsPort, false));
    awaitDriverReady();
    phase("chart installed and ready", t1);
  }

  static void phase(String what, long since) {
    phases.add(String.format("%s: %.1f s", what, (System.nanoTime() - since) / 1e9));
  }

  static void awaitDriverReady() {
    ClusterDriverSupport.awaitDriverReady(admin);
  }

  @AfterAll
  static void uninstall() throws Exception {
    phases.forEach(p -> System.err.println("cluster suite: " + p));
    if (admin != null) {
      System.err.println(ClusterDriverSupport.diagnostics(admin));
    }
    if (System.getProperty("efscsi.cluster.keep") != null) {
      cluster.close(); // says how to reach it and how to stop it
      return;
    }
    try {
      if (helm != null) {
        helm.uninstall();
      }
    } finally {
      if (admin != null) {
        admin.close();
      }
      if (cluster != null) {
        cluster.close();
      }
      ClusterHostPaths.cleanUp(work);
      if (efs != null) {
        efs.close();
      }
      if (lab != null) {
        lab.closeAndDelete();
      }
      if (work != null) {
        HostCleanup.deleteTree(work);
      }
      ClusterImages.remove();
    }
  }

  @Test
  @Order(1)
  void theNodeRegistersTheDriverWithItsInstanceIdAndLiftsTheTaint() {
    CSINode csiNode =
        admin
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
    admin
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
    admin
        .persistentVolumeClaims()
        .inNamespace("default")
        .resource(
            new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName("data")
                .endMetadata()
                .withNewSpec()
                .withAccessModes("ReadWriteMany")
                .withStorageClassName("efs-sc")
                .withNewResources()
                .withRequests(
                    Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity("5Gi")))
                .endResources()
                .endSpec()
                .build())
        .create();
    var pvc =
        admin
            .persistentVolumeClaims()
            .inNamespace("default")
            .withName("data")
            .waitUntilCondition(
                c -> c != null && "Bound".equals(c.getStatus().getPhase()), 120, TimeUnit.SECONDS);
    var pv = admin.persistentVolumes().withName(pvc.getSpec().getVolumeName()).get();
    String handle = pv.getSpec().getCsi().getVolumeHandle();
    // the form EKS Fargate's mounter accepts (no efs: prefix), as the Go driver v3.5.0 writes it
    assertTrue(handle.matches(fsId + "::fsap-[0-9a-f]{17}"), handle);
    String ap = handle.substring(handle.indexOf("::") + 2);
    assertTrue(efs.accessPoint(ap).isPresent(), "the access point is in the emulator: " + ap);

    runPod("writer", "data", "echo written-by-writer > /data/hello && sync && sleep 3600");
    awaitLog("writer", "");
    String read = execIn("writer", "/bin/cat", "/data/hello");
    assertEquals("written-by-writer\n", read);
    runPod("reader", "data", "cat /data/hello; sleep 3600");
    awaitLog("reader", "written-by-writer");
  }

  /** A busybox pod on the host network running {@code script} with {@code claim} at /data. */
  static void createPod(String name, String claim, String script) {
    admin.resource(ClusterDriverSupport.pod(name, claim, script)).create();
  }

  /** {@link #createPod}, then waits until it runs. */
  static void runPod(String name, String claim, String script) {
    createPod(name, claim, script);
    admin
        .pods()
        .inNamespace("default")
        .withName(name)
        .waitUntilCondition(
            p -> p != null && "Running".equals(p.getStatus().getPhase()), 120, TimeUnit.SECONDS);
  }

  static void awaitLog(String pod, String text) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    String log = "";
    while (System.nanoTime() < end) {
      log = admin.pods().inNamespace("default").withName(pod).getLog();
      if (log.contains(text)) {
        return;
      }
      Thread.sleep(250);
    }
    throw new AssertionError("pod " + pod + " never logged '" + text + "': " + log);
  }

  static String execIn(String pod, String... command) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (var exec =
        admin.pods().inNamespace("default").withName(pod).writingOutput(out).exec(command)) {
      exec.exitCode().get(30, TimeUnit.SECONDS);
    }
    return out.toString();
  }

  @Test
  @Order(9)
  void deletingThePodsUnpublishesAndDeletingTheClaimDeletesTheAccessPoint() throws Exception {
    var pv =
        admin.persistentVolumes().list().getItems().stream()
            .filter(v ->
                v.getSpec().getClaimRef() != null
                    && "data".equals(v.getSpec().getClaimRef().getName()))
            .findFirst()
            .orElseThrow();
    String handle = pv.getSpec().getCsi().getVolumeHandle();
    String ap = handle.substring(handle.indexOf("::") + 2);
    for (String p : List.of("writer", "reader", "static-writer")) {
      admin.pods().inNamespace("default").withName(p).withGracePeriod(1).delete();
    }
    for (String p : List.of("writer", "reader", "static-writer")) {
      admin
          .pods()
          .inNamespace("default")
          .withName(p)
          .waitUntilCondition(x -> x == null, 120, TimeUnit.SECONDS);
    }
    assertFalse(
        Files.readString(Path.of("/proc/self/mountinfo"))
            .contains(pv.getMetadata().getName() + "/mount"),
        "no pod's target of the volume is left mounted");
    admin.persistentVolumeClaims().inNamespace("default").withName("data").delete();
    admin
        .persistentVolumes()
        .withName(pv.getMetadata().getName())
        .waitUntilCondition(x -> x == null, 120, TimeUnit.SECONDS);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (efs.accessPoint(ap).isPresent() && System.nanoTime() < end) {
      Thread.sleep(250);
    }
    assertFalse(efs.accessPoint(ap).isPresent(), "the access point is deleted: " + ap);
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
    var grown = new io.fabric8.kubernetes.api.model.Quantity("8Gi");
    admin
        .persistentVolumeClaims()
        .inNamespace("default")
        .withName("data")
        .edit(c -> {
          c.getSpec().getResources().getRequests().put("storage", grown);
          return c;
        });
    var pvc =
        admin
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
    var pv = admin.persistentVolumes().withName(pvc.getSpec().getVolumeName()).get();
    assertEquals(grown, pv.getSpec().getCapacity().get("storage"));
    String handle = pv.getSpec().getCsi().getVolumeHandle();
    String ap = handle.substring(handle.indexOf("::") + 2);
    @SuppressWarnings("unchecked")
    var tags = (java.util.List<Map<String, Object>>) efs.accessPoint(ap).orElseThrow().get("Tags");
    assertTrue(
        tags.contains(
            Map.of("Key", "efs.csi.aws.com/requested-capacity-bytes", "Value", "8589934592")),
        "" + tags);
    for (String pod : java.util.List.of("writer", "reader")) {
      assertEquals(
          "Running",
          admin.pods().inNamespace("default").withName(pod).get().getStatus().getPhase());
    }
  }

  @Test
  @Order(3)
  void aStaticVolumeWithAnUpstreamHandleMountsItsPath() throws Exception {
    Files.createDirectories(test.resolve("root/static"));
    // the mount target DNS-name form the Go driver v3.5.0 accepts again (its PR #1946); it does
    // not resolve here, so the node finds the mount target as for any handle
    staticClaim("static", fsId + ".efs.us-east-1.amazonaws.com:/static");
    runPod("static-writer", "static-claim", "echo static > /data/from-static && sleep 3600");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Path written = test.resolve("root/static/from-static");
    while (!Files.exists(written) && System.nanoTime() < end) {
      Thread.sleep(250);
    }
    assertEquals("static\n", Files.readString(written), "the pod wrote into the handle's path");
  }

  /**
   * A static PV {@code <name>-pv} with {@code handle} (over TLS, the test CA) and the claim {@code
   * <name>-claim} bound to it.
   */
  static void staticClaim(String name, String handle) {
    for (var o : ClusterDriverSupport.staticClaim(name, handle, test.resolve("ca.crt"))) {
      admin.resource(o).create();
    }
  }

  /** The node plugin's pod. */
  static Pod nodePod() {
    return admin.pods().inNamespace(NS).withLabel("app", "efs-csi-node").list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .findFirst()
        .orElseThrow();
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
    ClusterDriverSupport.assertReadyOnlyAfterTheFirstPass(admin, nodePod());
  }

  @Test
  @Order(4)
  void statusAnswersInsideThePodAsTheRunbookSays() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (var exec =
        admin
            .pods()
            .inNamespace(NS)
            .withName(nodePod().getMetadata().getName())
            .inContainer("efs-plugin")
            .writingOutput(out)
            .writingError(out)
            // as the runbook writes it: no --state-dir, though the suite's state dir is not the
            // default one (the chart tells the container where it is)
            .exec("efs-csi", "status")) {
      assertEquals(0, exec.exitCode().get(60, TimeUnit.SECONDS), out.toString());
    }
    assertTrue(out.toString().contains(fsId), out.toString());
  }

  /** The pids of the proxies the node plugin runs for this suite (their state is under work/). */
  static java.util.Set<Long> proxies() throws java.io.IOException {
    return new java.util.TreeSet<>(
        ClusterDriverSupport.pidsWith("io.efscsi.proxy.ProxyMain", work.toString()));
  }

  @Test
  @Order(5)
  void aKilledPluginContainerIsRestartedAndAdoptsItsProxies() throws Exception {
    java.util.Set<Long> before = proxies();
    assertEquals(2, before.size(), "one proxy per volume: " + before);
    Pod pod = nodePod();
    List<Long> plugin =
        ClusterDriverSupport.pidsWith(
            "io.efscsi.launcher.Main", "--kubelet-root-dir=" + cluster.kubeletDir());
    assertEquals(1, plugin.size(), "the node plugin's JVM: " + plugin);
    assertTrue(ProcessHandle.of(plugin.getFirst()).orElseThrow().destroyForcibly());
    admin
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
    assertEquals(before, proxies(), "the same proxies, adopted, none restarted");
    var csiNode = admin.storage().v1().csiNodes().withName("localhost").get();
    assertEquals(DRIVER, csiNode.getSpec().getDrivers().getFirst().getName(), "still registered");
    assertEquals("written-by-writer\n", execIn("reader", "/bin/cat", "/data/hello"));
  }

  @Test
  @Order(6)
  void anUpgradeThatChangesTheNodePodLeavesTheProxiesAndServesAuthenticatedMetrics()
      throws Exception {
    java.util.Set<Long> before = proxies();
    String oldPod = nodePod().getMetadata().getUid();
    admin
        .serviceAccounts()
        .inNamespace("default")
        .resource(
            new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                .withNewMetadata()
                .withName("scraper")
                .endMetadata()
                .build())
        .create();
    // the release's values from helm itself (docs/migration.md), node metrics turned on
    helm.upgradeWithItsOwnValues("node.metrics.enabled=true");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (System.nanoTime() < end) {
      var pods = admin.pods().inNamespace(NS).withLabel("app", "efs-csi-node").list().getItems();
      if (pods.size() == 1
          && !pods.getFirst().getMetadata().getUid().equals(oldPod)
          && pods.getFirst().getStatus().getContainerStatuses().stream()
              .allMatch(c -> Boolean.TRUE.equals(c.getReady()))) {
        break;
      }
      Thread.sleep(500);
    }
    assertFalse(nodePod().getMetadata().getUid().equals(oldPod), "a new node pod");
    assertEquals(before, proxies(), "the upgrade left every proxy running");
    String token =
        admin
            .serviceAccounts()
            .inNamespace("default")
            .withName("scraper")
            .tokenRequest(
                new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
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
   * The runbook's kubectl lines, read from docs/ and run as printed (kubectl 1.31 against this 1.26
   * API server) once node metrics are on: security.md's "Verifying on a cluster" block answers what
   * its comments say, and migration.md's DaemonSet checks show the selector and the read-only
   * efs-utils mounts they promise.
   */
  @Test
  @Order(7)
  void theRunbooksKubectlLinesAnswerAsTheDocsSay() throws Exception {
    Path kubeconfig = cluster.dir().resolve("kubeconfig-admin");
    StringBuilder vars = new StringBuilder();
    int ran = 0;
    for (DocCommands.Line l : DocCommands.block("security.md", "kubectl auth can-i")) {
      if (l.command().matches("[A-Z_]+=\\S+")) {
        vars.append(l.command()).append("; ");
        continue;
      }
      var r = DocCommands.run(vars + l.command(), kubeconfig, Map.of());
      String what = l.command() + " -> " + r;
      ran++;
      if (l.comment().equals("no")) {
        assertEquals("no", r.output().strip(), what);
      } else if (l.comment().startsWith("yes only with node.metrics.enabled")) {
        assertEquals("yes", r.output().strip(), what);
      } else if (l.command().startsWith("ss ")) {
        assertEquals(0, r.exit(), what);
        assertTrue(r.output().matches("(?s).*127\\.0\\.0\\.1\\]?:20\\d\\d\\d .*java.*"), what);
        assertTrue(r.output().matches("(?s).*:9809 .*"), what);
        assertTrue(r.output().matches("(?s).*:3302 .*"), "metrics are on: " + what);
      } else {
        assertEquals(0, r.exit(), what);
        if (l.command().contains("clusterrolebindings")) {
          assertTrue(r.output().contains("efs-csi-metrics-auth-delegator"), what);
        }
        if (l.command().contains("hostPID")) {
          assertTrue(r.output().startsWith("true true"), what);
          assertTrue(r.output().contains("efs-plugin: {\"privileged\":true"), what);
        }
      }
    }
    assertEquals(8, ran, "the block's commands");
    var selector =
        DocCommands.run(
            DocCommands.block("migration.md", "spec.selector.matchLabels").getFirst().command(),
            kubeconfig,
            Map.of());
    assertEquals(
        "{\"app\":\"efs-csi-node\",\"app.kubernetes.io/instance\":\"efs\","
            + "\"app.kubernetes.io/name\":\"aws-efs-csi-driver\"}",
        selector.output().strip());
    String mounts =
        DocCommands.inline("migration.md", "kubectl -n kube-system get ds efs-csi-node -o yaml");
    var r = DocCommands.run(mounts, kubeconfig, Map.of());
    assertEquals(0, r.exit(), r.toString());
    for (String path : List.of("/var/amazon/efs", "/etc/amazon/efs-legacy")) {
      assertTrue(r.output().contains("mountPath: " + path), path + " in " + r.output());
    }
    assertTrue(r.output().contains("readOnly: true"), r.output());
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
    Pod old = nodePod();
    java.util.Set<Long> before = proxies();
    helm.upgradeWithItsOwnValues(
        "node.updateStrategy.type=OnDelete", "node.podAnnotations.efs-csi-test/roll=on-delete");
    var ds = admin.apps().daemonSets().inNamespace(NS).withName("efs-csi-node");
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
    Thread.sleep(10_000); // a RollingUpdate would have replaced it by now
    assertEquals(old.getMetadata().getUid(), nodePod().getMetadata().getUid(), "left alone");
    assertEquals(before, proxies());
    // the command docs/migration.md gives, through kubectl as the operator runs it
    String name = old.getMetadata().getName();
    String delete =
        DocCommands.inline("migration.md", "kubectl -n kube-system delete pod ")
            .replaceAll("<[^>]+>", name);
    var deleted = DocCommands.run(delete, cluster.dir().resolve("kubeconfig-admin"), Map.of());
    assertEquals(0, deleted.exit(), delete + ": " + deleted);
    assertTrue(deleted.output().contains("pod \"" + name + "\" deleted"), deleted.output());
    ds.waitUntilCondition(
        d ->
            Integer.valueOf(1).equals(d.getStatus().getUpdatedNumberScheduled())
                && Integer.valueOf(1).equals(d.getStatus().getNumberReady()),
        180,
        TimeUnit.SECONDS);
    Pod replacement = nodePod();
    assertFalse(replacement.getMetadata().getUid().equals(old.getMetadata().getUid()));
    assertEquals("on-delete", replacement.getMetadata().getAnnotations().get("efs-csi-test/roll"));
    ClusterDriverSupport.assertReadyOnlyAfterTheFirstPass(admin, replacement);
    assertEquals(before, proxies(), "the replacement adopted every proxy");
  }

  /**
   * A stage that fails leaves its reason where docs/metrics.md says: a {@code StageFailed} event on
   * the Node naming the volume handle (the node reads no pods; podInfoOnMount is off), besides
   * kubelet's own FailedMount on the pod.
   */
  @Test
  @Order(10)
  void aFailedStageIsAStageFailedEventOnTheNode() throws Exception {
    String handle = fsId + ":/fake-mount-failure";
    staticClaim("failing", handle);
    createPod("failing", "failing-claim", "exec sleep 3600");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    io.fabric8.kubernetes.api.model.Event found = null;
    while (found == null && System.nanoTime() < end) {
      found =
          admin.v1().events().inNamespace("default").list().getItems().stream()
              .filter(e -> "StageFailed".equals(e.getReason()))
              .filter(e -> "Node".equals(e.getInvolvedObject().getKind()))
              .filter(e -> "localhost".equals(e.getInvolvedObject().getName()))
              .filter(e -> e.getMessage().contains(handle))
              .findFirst()
              .orElse(null);
      Thread.sleep(500);
    }
    assertNotNull(found, "a StageFailed event on the Node naming " + handle);
    assertEquals("Warning", found.getType());
    assertEquals("efs.csi.aws.com", found.getReportingComponent());
    admin.pods().inNamespace("default").withName("failing").withGracePeriod(0).delete();
    admin
        .pods()
        .inNamespace("default")
        .withName("failing")
        .waitUntilCondition(x -> x == null, 120, TimeUnit.SECONDS);
    admin.persistentVolumeClaims().inNamespace("default").withName("failing-claim").delete();
    admin.persistentVolumes().withName("failing-pv").delete();
  }

  @Test
  @Order(11)
  void helmUninstallLeavesTheCsiDriverAsUpstreamDoes() throws Exception {
    helm.uninstall();
    helm = null;
    assertNotNull(admin.storage().v1().csiDrivers().withName(DRIVER).get());
    assertTrue(admin.apps().daemonSets().inNamespace(NS).withName("efs-csi-node").get() == null);
  }
}

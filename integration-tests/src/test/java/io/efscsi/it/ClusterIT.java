package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.it.cluster.Cluster;
import io.efscsi.it.cluster.Images;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The one-node cluster itself: the kubelet registers with the EKS-style provider id and zone, the
 * scheduler places a pod, containerd runs it from an imported image, and the API server reaches the
 * kubelet for logs and exec. And {@code efs-csi preflight}, run as an operator runs it (the
 * packaged launcher, an admin kubeconfig), reads the cluster's EFS objects through it.
 */
class ClusterIT {

  static Cluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    long t0 = System.nanoTime();
    cluster = Cluster.start();
    TestTimes.since("cluster start", "ClusterIT", t0, "");
    admin = cluster.admin();
    cluster.importImage(Images.busybox(cluster.dir()));
  }

  /**
   * reliability.md's way to look at a kept cluster and then remove it, run as printed: the cluster
   * is closed as {@code -Defscsi.cluster.keep=1} closes it (everything left running), kubectl lists
   * its pods, and {@code scripts/cluster-down} removes all of it: no process of it is left, nor its
   * directory.
   */
  @AfterAll
  static void stop() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (cluster == null) {
      return;
    }
    java.nio.file.Path dir = cluster.dir();
    System.setProperty("efscsi.cluster.keep", "1");
    try {
      cluster.close();
    } finally {
      System.clearProperty("efscsi.cluster.keep");
    }
    List<String> lines =
        DocCommands.block("reliability.md", "scripts/cluster-down").stream()
            .map(DocCommands.Line::command)
            .filter(c -> !c.startsWith("./mvnw") && !c.startsWith("-D"))
            .map(c -> c.replace("/tmp/efs-csi-cluster-NNN", dir.toString()))
            .toList();
    assertEquals(2, lines.size(), "get pods, cluster-down: " + lines);
    var pods = DocCommands.run(lines.get(0), java.nio.file.Path.of("/dev/null"), Map.of());
    var down = DocCommands.run(lines.get(1), java.nio.file.Path.of("/dev/null"), Map.of());
    assertEquals(0, pods.exit(), lines.get(0) + " -> " + pods);
    assertTrue(
        pods.output().startsWith("NAMESPACE") || pods.errors().equals("No resources found"),
        pods.toString());
    assertEquals(0, down.exit(), lines.get(1) + " -> " + down);
    assertTrue(down.output().contains("removed " + dir), down.toString());
    assertFalse(java.nio.file.Files.exists(dir), dir + " is gone");
    assertEquals(
        List.of(),
        ProcessHandle.allProcesses()
            .filter(ph -> ph.info().commandLine().orElse("").contains(dir.toString()))
            .map(ph -> ph.pid() + " " + ph.info().commandLine().orElse(""))
            .toList(),
        "no process of the cluster is left");
    try (var hierarchies = java.nio.file.Files.list(java.nio.file.Path.of("/sys/fs/cgroup"))) {
      for (var h : hierarchies.toList()) {
        assertFalse(
            java.nio.file.Files.exists(h.resolve(Cluster.CGROUP_ROOT)),
            h + ": the kubelet's group");
      }
    }
  }

  @Test
  void theNodeIsRegisteredAsOnEks() {
    var node = admin.nodes().withName("localhost").get();
    assertEquals("aws:///us-east-1a/i-0123456789abcdef0", node.getSpec().getProviderID());
    assertEquals("us-east-1a", node.getMetadata().getLabels().get("topology.kubernetes.io/zone"));
  }

  @Test
  void aPodIsScheduledRunAndReachable() throws Exception {
    admin
        .serviceAccounts()
        .inNamespace("default")
        .withName("default")
        .waitUntilCondition(sa -> sa != null, 60, TimeUnit.SECONDS);
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("hello")
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .withHostNetwork(true)
            .withTerminationGracePeriodSeconds(1L)
            .addNewContainer()
            .withName("c")
            .withImage(Images.BUSYBOX)
            .withImagePullPolicy("Never")
            .withCommand("/bin/sh", "-c", "echo hello from the pod; exec sleep 3600")
            .endContainer()
            .endSpec()
            .build();
    admin.resource(pod).create();
    admin
        .pods()
        .inNamespace("default")
        .withName("hello")
        .waitUntilCondition(
            p -> p != null && "Running".equals(p.getStatus().getPhase()), 90, TimeUnit.SECONDS);
    assertTrue(
        admin
            .pods()
            .inNamespace("default")
            .withName("hello")
            .getLog()
            .contains("hello from the pod"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (var exec =
        admin
            .pods()
            .inNamespace("default")
            .withName("hello")
            .writingOutput(out)
            .exec("/bin/cat", "/proc/1/cmdline")) {
      exec.exitCode().get(30, TimeUnit.SECONDS);
    }
    assertTrue(out.toString().startsWith("sleep"), out.toString());
    admin.pods().inNamespace("default").withName("hello").withGracePeriod(1).delete();
    admin
        .pods()
        .inNamespace("default")
        .withName("hello")
        .waitUntilCondition(p -> p == null, 60, TimeUnit.SECONDS);
  }

  @Test
  void thePreflightTablesEachEfsObjectAndExitsOneUntilTheBrokenOnesAreGone() throws Exception {
    admin
        .resourceList(
            storageClass(
                "efs-good",
                Map.of(
                    "provisioningMode",
                    "efs-ap",
                    "fileSystemId",
                    "fs-12345678",
                    "directoryPerms",
                    "700")),
            storageClass(
                "efs-bad",
                Map.of(
                    "provisioningMode",
                    "efs-ap",
                    "fileSystemId",
                    "fs-12345678",
                    "directoryPerms",
                    "999")),
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("gp3")
                .endMetadata()
                .withProvisioner("ebs.csi.aws.com")
                .build(),
            volume("pv-static", "fs-12345678", List.of("tls")),
            volume("pv-ap", "efs:fs-12345678::fsap-0123456789abcdef0", List.of("tls", "iam")),
            volume("pv-bad", "fs-12345678:a:b:fsap-1:extra", List.of()),
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pv-nfs")
                .endMetadata()
                .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteMany")
                .withNewNfs()
                .withServer("10.0.0.1")
                .withPath("/")
                .endNfs()
                .endSpec()
                .build())
        .create();
    try {
      Run r = preflight();
      assertEquals(1, r.exit(), r.out());
      List<String> rows = r.out().lines().toList();
      assertEquals(
          List.of(
              "StorageClass efs-bad refuse",
              "StorageClass efs-good ok",
              "PersistentVolume pv-ap ok",
              "PersistentVolume pv-bad refuse",
              "PersistentVolume pv-static ok"),
          rows.subList(1, rows.size() - 1).stream()
              .map(l -> String.join(" ", List.of(l.split(" +")).subList(0, 3)))
              .toList(),
          r.out());
      assertTrue(r.out().contains("directoryPerms"), r.out());
      assertEquals(
          "3 ok, 0 take-over, 0 leave, 2 refuse: fix the refused ones before switching (exit 1)",
          rows.getLast());

      admin.storage().v1().storageClasses().withName("efs-bad").delete();
      admin.persistentVolumes().withName("pv-bad").delete();
      admin
          .persistentVolumes()
          .withName("pv-bad")
          .waitUntilCondition(pv -> pv == null, 30, TimeUnit.SECONDS);
      Run fixed = preflight();
      assertEquals(0, fixed.exit(), fixed.out());
      assertTrue(
          fixed.out().endsWith("3 ok, 0 take-over, 0 leave, 0 refuse: nothing would break\n"),
          fixed.out());
    } finally {
      for (String sc : List.of("efs-good", "efs-bad", "gp3")) {
        admin.storage().v1().storageClasses().withName(sc).delete();
      }
      for (String pv : List.of("pv-static", "pv-ap", "pv-bad", "pv-nfs")) {
        admin.persistentVolumes().withName(pv).delete();
      }
    }
  }

  record Run(int exit, String out) {}

  /**
   * The packaged launcher's preflight with the cluster's admin kubeconfig, as an operator runs it.
   */
  static Run preflight() throws Exception {
    Process p =
        new ProcessBuilder(
                PackagedDriver.distDir().resolve("bin/efs-csi").toString(),
                "preflight",
                "--kubeconfig",
                cluster.dir().resolve("kubeconfig-admin").toString(),
                "--region",
                "us-east-1")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
    return new Run(p.exitValue(), out);
  }

  static StorageClass storageClass(String name, Map<String, String> parameters) {
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withProvisioner("efs.csi.aws.com")
        .withParameters(parameters)
        .build();
  }

  static PersistentVolume volume(String name, String handle, List<String> mountOptions) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withCapacity(Map.of("storage", new Quantity("5Gi")))
        .withAccessModes("ReadWriteMany")
        .withMountOptions(mountOptions)
        .withNewCsi()
        .withDriver("efs.csi.aws.com")
        .withVolumeHandle(handle)
        .endCsi()
        .endSpec()
        .build();
  }
}

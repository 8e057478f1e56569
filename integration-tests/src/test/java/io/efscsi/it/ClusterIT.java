package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.it.cluster.Cluster;
import io.efscsi.it.cluster.Images;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The one-node cluster itself: the kubelet registers with the EKS-style provider id and zone, the
 * scheduler places a pod, containerd runs it from an imported image, and the API server reaches the
 * kubelet for logs and exec.
 */
class ClusterIT {

  static Cluster cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    cluster = Cluster.start();
    admin = cluster.admin();
    cluster.importImage(Images.busybox(cluster.dir()));
  }

  @AfterAll
  static void stop() {
    if (admin != null) {
      admin.close();
    }
    if (cluster != null) {
      cluster.close();
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
}

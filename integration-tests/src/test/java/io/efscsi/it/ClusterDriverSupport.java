package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.it.cluster.Images;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What {@link ClusterDriver} reads and writes around its cluster: the chart values it installs
 * with, the processes it looks for on the host, and the diagnostics it prints.
 */
final class ClusterDriverSupport {

  private ClusterDriverSupport() {}

  /**
   * The values an operator on this cluster would write; node metrics on or off; the controller as
   * the chart's defaults run it (two replicas on the pod network) or one replica on the host
   * network.
   */
  static String values(ClusterDriver d, boolean metrics, boolean chartController) {
    String env =
        """
            - {name: AWS_REGION, value: us-east-1}
            - {name: AWS_ENDPOINT_URL_EFS, value: "%s"}
            - {name: AWS_ENDPOINT_URL_STS, value: "%s"}
            - {name: AWS_ACCESS_KEY_ID, value: test}
            - {name: AWS_SECRET_ACCESS_KEY, value: test}
            - {name: AWS_EC2_METADATA_DISABLED, value: "true"}
            - {name: AWS_EC2_METADATA_SERVICE_ENDPOINT, value: "http://127.0.0.1:9"}
        """
            .formatted(d.efs.endpoint(), d.efs.endpoint());
    return """
    image: {repository: efs-csi-test/efs-csi, tag: it, pullPolicy: Never}
    sidecars:
      livenessProbe: {image: {repository: efs-csi-test/livenessprobe, tag: it, pullPolicy: Never}}
      nodeDriverRegistrar: {image: {repository: efs-csi-test/csi-node-driver-registrar, tag: it, pullPolicy: Never}}
      csiProvisioner: {image: {repository: efs-csi-test/csi-provisioner, tag: it, pullPolicy: Never}}
      csiResizer: {image: {repository: efs-csi-test/csi-resizer, tag: it, pullPolicy: Never}}
    controller:
    %8$s
      env:
    %1$s
    node:
      kubeletPath: %2$s
      env:
    %1$s
        - {name: FAKE_NFS_ROOT, value: "%3$s/root"}
        - {name: FAKE_NFS_LOG, value: "%3$s/nfs-mounts.log"}
        - {name: FAKE_NFS_HOLD, value: "%3$s/hold-mounts"}
        - {name: FAKE_NFS_ROOT_PER_PORT, value: "1"}
      additionalArgs:
        - --nfs-mount-command=%3$s/fake-nfs-mount
        - --mount-target-port=%4$d
        - --mount-absent-grace=1h
      proxy:
        stateDir: %5$s
        cgroupParent: efs-csi-cluster-proxies
      metrics: {enabled: %7$s}
    storageClasses:
      - name: efs-sc
        parameters: {provisioningMode: efs-ap, fileSystemId: %6$s, directoryPerms: "700"}
        mountOptions: [cafile=%3$s/ca.crt]
    monitoring:
      metricsReader:
        subjects: [{kind: ServiceAccount, name: scraper, namespace: default}]
    """
        .formatted(
            env.stripTrailing(),
            d.cluster.kubeletDir(),
            d.test,
            d.tlsPort,
            d.work.resolve("state"),
            d.fsId,
            metrics,
            chartController
                ? "  # the chart's defaults: two replicas on the pod network"
                : "  replicaCount: 1\n  hostNetwork: true");
  }

  /** The processes whose command line (/proc/PID/cmdline) holds every one of {@code parts}. */
  static List<Long> pidsWith(String... parts) throws java.io.IOException {
    List<Long> out = new ArrayList<>();
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path p : procs.filter(d -> d.getFileName().toString().matches("\\d+")).toList()) {
        String cmd;
        try {
          cmd = Files.readString(p.resolve("cmdline")).replace('\0', ' ');
        } catch (java.io.IOException gone) {
          continue;
        }
        if (java.util.Arrays.stream(parts).allMatch(cmd::contains)) {
          out.add(Long.parseLong(p.getFileName().toString()));
        }
      }
    }
    return out;
  }

  /**
   * The last lines of every container of the driver's pods, and the events, for a failure's cause.
   */
  static String diagnostics(KubernetesClient admin) {
    StringBuilder out = new StringBuilder("---- cluster diagnostics\n");
    try {
      for (Pod p : admin.pods().inAnyNamespace().list().getItems()) {
        for (var c : p.getSpec().getContainers()) {
          out.append("== ")
              .append(p.getMetadata().getName())
              .append('/')
              .append(c.getName())
              .append('\n');
          try {
            out.append(
                admin
                    .pods()
                    .inNamespace(p.getMetadata().getNamespace())
                    .withName(p.getMetadata().getName())
                    .inContainer(c.getName())
                    .tailingLines(40)
                    .getLog());
          } catch (RuntimeException e) {
            out.append(e.getMessage()).append('\n');
          }
        }
      }
      for (var e : admin.v1().events().inAnyNamespace().list().getItems()) {
        out.append(event(e));
      }
    } catch (RuntimeException e) {
      out.append(e).append('\n');
    }
    return out.toString();
  }

  /** A claim of efs-sc in namespace default, of {@code size}, with {@code labels}. */
  static io.fabric8.kubernetes.api.model.PersistentVolumeClaim claim(
      String name, java.util.Map<String, String> labels, String size) {
    return new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .withLabels(labels)
        .endMetadata()
        .withNewSpec()
        .withAccessModes("ReadWriteMany")
        .withStorageClassName("efs-sc")
        .withNewResources()
        .withRequests(
            java.util.Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity(size)))
        .endResources()
        .endSpec()
        .build();
  }

  /** A busybox pod on the host network running {@code script} with {@code claim} at /data. */
  static Pod pod(String name, String claim, String script) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withTerminationGracePeriodSeconds(1L)
        .withHostNetwork(true)
        .addNewContainer()
        .withName("c")
        .withImage(Images.BUSYBOX)
        .withImagePullPolicy("Never")
        .withCommand("/bin/sh", "-c", script)
        .addNewVolumeMount()
        .withName("v")
        .withMountPath("/data")
        .endVolumeMount()
        .endContainer()
        .addNewVolume()
        .withName("v")
        .withNewPersistentVolumeClaim()
        .withClaimName(claim)
        .endPersistentVolumeClaim()
        .endVolume()
        .endSpec()
        .build();
  }

  /**
   * A static PV {@code <name>-pv} with {@code handle} (over TLS, {@code caFile} as the CA) and the
   * claim {@code <name>-claim} in namespace default, bound to it.
   */
  static List<io.fabric8.kubernetes.api.model.HasMetadata> staticClaim(
      String name, String handle, Path caFile) {
    var size = java.util.Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi"));
    return List.of(
        new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(name + "-pv")
            .endMetadata()
            .withNewSpec()
            .withCapacity(size)
            .withAccessModes("ReadWriteMany")
            .withPersistentVolumeReclaimPolicy("Retain")
            .withStorageClassName("")
            .withMountOptions("tls", "cafile=" + caFile)
            .withNewCsi()
            .withDriver(ClusterDriver.DRIVER)
            .withVolumeHandle(handle)
            .endCsi()
            .endSpec()
            .build(),
        new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withName(name + "-claim")
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .withAccessModes("ReadWriteMany")
            .withStorageClassName("")
            .withVolumeName(name + "-pv")
            .withNewResources()
            .withRequests(size)
            .endResources()
            .endSpec()
            .build());
  }

  /** Until the node DaemonSet and the controller Deployment each have one ready pod. */
  static void awaitDriverReady(KubernetesClient admin) {
    awaitDriverReady(admin, 1);
  }

  /**
   * Until the node DaemonSet has one ready pod and the controller Deployment {@code controllers}.
   */
  static void awaitDriverReady(KubernetesClient admin, int controllers) {
    awaitDriverReady(admin, controllers, 180);
  }

  /** {@link #awaitDriverReady(KubernetesClient, int)} within {@code seconds} for each. */
  static void awaitDriverReady(KubernetesClient admin, int controllers, int seconds) {
    try {
      admin
          .apps()
          .daemonSets()
          .inNamespace("kube-system")
          .withName("efs-csi-node")
          .waitUntilCondition(
              d ->
                  d != null
                      && d.getStatus() != null
                      && Integer.valueOf(1).equals(d.getStatus().getNumberReady()),
              seconds,
              TimeUnit.SECONDS);
      admin
          .apps()
          .deployments()
          .inNamespace("kube-system")
          .withName("efs-csi-controller")
          .waitUntilCondition(
              d ->
                  d != null
                      && d.getStatus() != null
                      && Integer.valueOf(controllers).equals(d.getStatus().getReadyReplicas()),
              seconds,
              TimeUnit.SECONDS);
    } catch (io.fabric8.kubernetes.client.KubernetesClientTimeoutException e) {
      throw new AssertionError(
          "the driver not ready within "
              + seconds
              + " s: "
              + e.getMessage()
              + "\n"
              + readiness(admin),
          e);
    }
  }

  /**
   * Why the driver's pods are not ready, in a few lines (the CI log keeps the end of a run only):
   * the node's taints, each driver pod's phase, conditions and containers' states, the last events
   * of kube-system.
   */
  static String readiness(KubernetesClient admin) {
    StringBuilder out = new StringBuilder();
    try {
      var node = admin.nodes().withName("localhost").get();
      out.append("node taints: ")
          .append(
              node == null || node.getSpec().getTaints() == null
                  ? "none"
                  : node.getSpec().getTaints().stream()
                      .map(t -> t.getKey() + ":" + t.getEffect())
                      .toList())
          .append('\n');
      for (Pod p : admin.pods().inNamespace("kube-system").list().getItems()) {
        var st = p.getStatus();
        out.append("pod ")
            .append(p.getMetadata().getName())
            .append(p.getMetadata().getDeletionTimestamp() == null ? "" : " (being deleted)")
            .append(": ")
            .append(st == null ? "no status" : st.getPhase())
            .append(
                st == null || st.getConditions() == null
                    ? ""
                    : st.getConditions().stream()
                        .map(c ->
                            c.getType()
                                + "="
                                + c.getStatus()
                                + (c.getReason() == null ? "" : "(" + c.getReason() + ")"))
                        .toList())
            .append('\n');
        if (st != null && st.getContainerStatuses() != null) {
          for (var c : st.getContainerStatuses()) {
            out.append("  ")
                .append(c.getName())
                .append(" ready=")
                .append(c.getReady())
                .append(" restarts=")
                .append(c.getRestartCount())
                .append(' ')
                .append(state(c.getState()))
                .append(c.getLastState() == null ? "" : " last: " + state(c.getLastState()))
                .append('\n');
          }
        }
      }
      var events = admin.v1().events().inNamespace("kube-system").list().getItems();
      for (var e : events.subList(Math.max(0, events.size() - 12), events.size())) {
        out.append(e.getLastTimestamp()).append(' ').append(event(e));
      }
    } catch (RuntimeException e) {
      out.append(e).append('\n');
    }
    return out.toString();
  }

  /** The kubelet's last 20 errors and warnings that name the driver's pods, 300 characters each. */
  static String kubeletLines(Path kubeletLog) {
    var klogErrorOrWarning = java.util.regex.Pattern.compile("(^|\\s)[EW]\\d{4} ");
    try (var lines = Files.lines(kubeletLog)) {
      List<String> ours =
          lines
              .filter(l -> l.contains("efs-csi") && klogErrorOrWarning.matcher(l).find())
              .map(l -> l.length() > 300 ? l.substring(0, 300) + "..." : l)
              .toList();
      return String.join("\n", ours.subList(Math.max(0, ours.size() - 20), ours.size())) + "\n";
    } catch (IOException | java.io.UncheckedIOException e) {
      return e + "\n";
    }
  }

  /** An event on a line: type, object, reason and message. */
  private static String event(io.fabric8.kubernetes.api.model.Event e) {
    return e.getType()
        + ' '
        + e.getInvolvedObject().getKind()
        + '/'
        + e.getInvolvedObject().getName()
        + ' '
        + e.getReason()
        + ": "
        + e.getMessage()
        + '\n';
  }

  private static String state(io.fabric8.kubernetes.api.model.ContainerState s) {
    if (s == null) {
      return "";
    }
    if (s.getWaiting() != null) {
      return "waiting "
          + s.getWaiting().getReason()
          + (s.getWaiting().getMessage() == null ? "" : " " + s.getWaiting().getMessage());
    }
    if (s.getRunning() != null) {
      return "running since " + s.getRunning().getStartedAt();
    }
    if (s.getTerminated() != null) {
      return "terminated "
          + s.getTerminated().getReason()
          + " exit "
          + s.getTerminated().getExitCode()
          + " at "
          + s.getTerminated().getFinishedAt();
    }
    return "";
  }

  /**
   * The node pod turned Ready no earlier than its plugin logged its first takeover pass done, and
   * that pass came after the container started.
   */
  static void assertReadyOnlyAfterTheFirstPass(KubernetesClient admin, Pod pod) {
    var ready =
        pod.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Ready") && c.getStatus().equals("True"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("the node pod is not Ready: " + pod.getStatus()));
    String log =
        admin
            .pods()
            .inNamespace(ClusterDriver.NS)
            .withName(pod.getMetadata().getName())
            .inContainer("efs-plugin")
            .getLog();
    String line =
        log.lines()
            .filter(l -> l.contains("first takeover pass done"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no first takeover pass in the log:\n" + log));
    java.time.Instant passDone = java.time.OffsetDateTime.parse(line.split(" ")[0]).toInstant();
    java.time.Instant readyAt = java.time.Instant.parse(ready.getLastTransitionTime());
    java.time.Instant started =
        java.time.Instant.parse(
            pod.getStatus().getContainerStatuses().stream()
                .filter(c -> c.getName().equals("efs-plugin"))
                .findFirst()
                .orElseThrow()
                .getState()
                .getRunning()
                .getStartedAt());
    // the API's times are whole seconds
    assertTrue(
        !readyAt.isBefore(passDone.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)),
        "Ready at " + readyAt + ", first pass done at " + passDone);
    assertTrue(
        passDone.isAfter(started),
        "the plugin started at " + started + " and finished its first pass at " + passDone);
  }
}

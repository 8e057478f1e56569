package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.emulator.EfsEmulator;
import io.efscsi.it.cluster.Cluster;
import io.efscsi.supervisor.host.ProcMountTable;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The chart installed as an operator installs it ({@code helm upgrade --install} of deploy/helm
 * with the project's own image and sidecar images made from the shared binaries) into the one-node
 * {@link Cluster}: what {@link ClusterDriverIT} (the volume's life, restarts and upgrades) and
 * {@link ClusterRunbookIT} and {@link ClusterRemovalIT} (the docs' commands) each get from {@link
 * ClusterDriverFixture}: a release per class on the one cluster they share ({@link ClusterShared}).
 * The EFS API is the project's emulator, the mount target a TLS server in front of nfs-ganesha, and
 * the NFS mount command the stand-in (this kernel has no NFS client; the kernel VM suite keeps the
 * real one), which bind-mounts one directory as the file system's root so that pods share data.
 */
final class ClusterDriver implements AutoCloseable {

  static final String NS = "kube-system";
  static final String DRIVER = "efs.csi.aws.com";

  /** The release name docs/ uses in every helm command. */
  static final String RELEASE = "aws-efs-csi-driver";

  final Cluster cluster;
  final KubernetesClient admin;
  final Path work;
  final List<String> phases = new ArrayList<>();
  NfsLab lab;
  EfsEmulator efs;
  String fsId;

  /** What the node container sees under the kubelet directory: the fake NFS root, CA, script. */
  Path test;

  /** Null once a test has uninstalled the release. */
  ClusterHelm helm;

  int tlsPort;

  /** The test class this cluster is for (the time table's rows name it). */
  final String owner;

  /** The chart values this class installs with. */
  private final java.util.function.Function<ClusterDriver, String> values;

  /** How many controller replicas those values run. */
  final int controllers;

  private ClusterDriver(
      ClusterShared shared,
      Path work,
      String owner,
      java.util.function.Function<ClusterDriver, String> values,
      int controllers) {
    this.values = values;
    this.controllers = controllers;
    this.cluster = shared.cluster;
    this.admin = shared.admin;
    this.lab = shared.lab;
    this.efs = shared.efs;
    this.fsId = shared.fsId;
    this.test = shared.test;
    this.tlsPort = shared.tlsPort;
    this.work = work;
    this.owner = owner;
  }

  /**
   * The cluster up with the chart installed and ready, for test class {@code owner}; closed by
   * {@link #close}.
   */
  static synchronized ClusterDriver start(String owner) throws Exception {
    return start(owner, d -> ClusterDriverSupport.values(d, false, false), 1);
  }

  /**
   * {@link #start(String)} with the chart values {@code values} makes, which run {@code
   * controllers} controller replicas.
   */
  static synchronized ClusterDriver start(
      String owner, java.util.function.Function<ClusterDriver, String> values, int controllers)
      throws Exception {
    ClusterShared shared = ClusterShared.get(owner);
    ClusterDriver d;
    try {
      d =
          new ClusterDriver(
              shared,
              Files.createTempDirectory("efscsi-cluster-driver"),
              owner,
              values,
              controllers);
    } catch (IOException | RuntimeException e) {
      ClusterShared.closeCurrent(e);
      throw e;
    }
    try {
      d.install();
      return d;
    } catch (NotReady e) {
      // the cluster, not the class under test: a node that does not run a fresh release's pods
      // (seen once in CI, 2026-12-02, after ClusterFaultsIT; the why is in the message) gets a new
      // cluster once in a run, and the run says so at its end
      if (!ClusterShared.recovery(owner, e)) {
        ClusterShared.closeAfter(d, e);
        throw e;
      }
      long t0 = System.nanoTime();
      try {
        Throwable failed = d.takeOff(true);
        if (failed != null) {
          System.err.println("cluster suite: the uninstall before a new cluster failed: " + failed);
        }
      } catch (Exception x) {
        System.err.println("cluster suite: the clean-up before a new cluster failed: " + x);
      }
      ClusterShared.closeCurrent(e);
      try {
        return start(owner, values, controllers);
      } finally {
        TestTimes.since("a new cluster after the driver was not ready", owner, t0, "recovered");
      }
    } catch (Exception | AssertionError e) {
      ClusterShared.closeAfter(d, e);
      throw e;
    }
  }

  /** The driver's pods not ready at a class's start. */
  static final class NotReady extends AssertionError {
    NotReady(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private void install() throws Exception {
    long t1 = System.nanoTime();
    // as a node group bootstrapped for the driver starts (upstream's startup taint)
    for (int attempt = 1; ; attempt++) {
      try {
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
        break;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        // 409: the kubelet wrote the node (its status) between our read and our patch, which
        // carries the version read (the full run of 50b64f6); read it again
        if (e.getCode() != 409 || attempt >= 10) {
          throw e;
        }
      }
    }
    helm = new ClusterHelm(cluster, work);
    // docs/install.md's command, the values file an operator on this cluster would write
    helm.install(values.apply(this));
    try {
      // 14-15 s alone, 40 s beside NodeCrashIT with a kubelet in backoff
      ClusterDriverSupport.awaitDriverReady(admin, controllers, 120);
    } catch (AssertionError e) {
      throw new NotReady(
          e.getMessage()
              + "kubelet.log's errors on the driver's pods, the last:\n"
              + ClusterDriverSupport.kubeletLines(cluster.dir().resolve("kubelet.log")),
          e.getCause());
    }
    phase("chart installed and ready", t1);
  }

  /** One step of the start: in the suite's log at the end, and in the time table. */
  void phase(String what, long since) {
    double s = (System.nanoTime() - since) / 1e9;
    phases.add(String.format("%s: %.1f s", what, s));
    TestTimes.record(what, owner, s, "");
  }

  Path kubeconfig() {
    return cluster.dir().resolve("kubeconfig-admin");
  }

  /** A docs/ command run with bash and the suite's kubectl against this cluster. */
  DocCommands.Ran run(String command) throws IOException, InterruptedException {
    return DocCommands.run(command, kubeconfig(), Map.of());
  }

  /** {@link #run} that must exit 0. */
  DocCommands.Ran ok(String command) throws IOException, InterruptedException {
    DocCommands.Ran r = run(command);
    if (r.exit() != 0) {
      throw new AssertionError(command + " -> " + r);
    }
    return r;
  }

  /** A busybox pod on the host network running {@code script} with {@code claim} at /data. */
  void createPod(String name, String claim, String script) {
    admin.resource(ClusterDriverSupport.pod(name, claim, script)).create();
  }

  /** {@link #createPod}, then waits until it runs. */
  void runPod(String name, String claim, String script) {
    createPod(name, claim, script);
    admin
        .pods()
        .inNamespace("default")
        .withName(name)
        .waitUntilCondition(
            p -> p != null && "Running".equals(p.getStatus().getPhase()), 120, TimeUnit.SECONDS);
  }

  /**
   * Deletes pod {@code name} of namespace default with {@code graceSeconds} and waits until gone.
   */
  void deletePod(String name, long graceSeconds) {
    var pod = admin.pods().inNamespace("default").withName(name);
    pod.withGracePeriod(graceSeconds).delete();
    pod.waitUntilCondition(x -> x == null, 120, TimeUnit.SECONDS);
  }

  void awaitLog(String pod, String text) throws InterruptedException {
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

  String execIn(String pod, String... command) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (var exec =
        admin.pods().inNamespace("default").withName(pod).writingOutput(out).exec(command)) {
      exec.exitCode().get(30, TimeUnit.SECONDS);
    }
    return out.toString();
  }

  /**
   * A static PV {@code <name>-pv} with {@code handle} (over TLS, the test CA) and the claim {@code
   * <name>-claim} bound to it.
   */
  void staticClaim(String name, String handle) {
    for (var o : ClusterDriverSupport.staticClaim(name, handle, test.resolve("ca.crt"))) {
      admin.resource(o).create();
    }
  }

  /** The ServiceAccount default/scraper, which the values' metricsReader lets read /metrics. */
  void createScraper() {
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
  }

  /**
   * A token of default/scraper living {@code seconds} (two requests in one second for the same
   * lifetime give the same token).
   */
  String scraperToken(long seconds) {
    return admin
        .serviceAccounts()
        .inNamespace("default")
        .withName("scraper")
        .tokenRequest(
            new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder()
                .withNewSpec()
                .withExpirationSeconds(seconds)
                .endSpec()
                .build())
        .getStatus()
        .getToken();
  }

  /** The node plugin's pod. */
  Pod nodePod() {
    return admin.pods().inNamespace(NS).withLabel("app", "efs-csi-node").list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .findFirst()
        .orElseThrow();
  }

  /** The pids of the proxies the node plugin runs for this suite (their state is under work/). */
  Set<Long> proxies() throws IOException {
    return new TreeSet<>(
        ClusterDriverSupport.pidsWith("io.efscsi.proxy.ProxyMain", work.toString()));
  }

  /**
   * What the debug pod's command printed: kubectl's attach without a terminal can miss a command
   * that ends before it attaches (only "Creating debugging pod …" comes back), so the pod's log is
   * read once it has ended, as an operator would with {@code kubectl logs}. The pod is deleted.
   */
  String debugOutput(DocCommands.Ran r) {
    var m =
        java.util.regex.Pattern.compile("Creating debugging pod (\\S+) ")
            .matcher(r.output() + r.errors());
    assertTrue(m.find(), "kubectl named its debug pod: " + r);
    var pod = admin.pods().inNamespace("default").withName(m.group(1));
    pod.waitUntilCondition(
        p -> p != null && List.of("Succeeded", "Failed").contains(p.getStatus().getPhase()),
        120,
        TimeUnit.SECONDS);
    String log = pod.getLog();
    deleteDebugPods();
    return log;
  }

  /**
   * kubectl debug leaves its node-debugger pods behind (Completed): removed as an operator would.
   */
  void deleteDebugPods() {
    for (var p : admin.pods().inNamespace("default").list().getItems()) {
      if (p.getMetadata().getName().startsWith("node-debugger-")) {
        admin.resource(p).withGracePeriod(0).delete();
      }
    }
  }

  /**
   * Ends the class: the cluster closed when it was the last class to share it (or the class left it
   * in a state the next must not inherit), else put back as a fresh cluster has it for the next:
   * the test objects in default (pods, claims, service accounts) and every PV deleted, the release
   * uninstalled (helm waits until its pods are gone) with the CSIDriver its chart keeps and what
   * else runs in kube-system (the handback pod), this class's proxies stopped with their state and
   * cgroups, the file system's root emptied.
   */
  @Override
  public void close() throws Exception {
    phases.forEach(p -> System.err.println("cluster suite: " + p));
    System.err.println(ClusterDriverSupport.diagnostics(admin));
    boolean last = ClusterShared.ended(owner);
    if (!last) {
      long t0 = System.nanoTime();
      try {
        reset();
        TestTimes.since("cluster reset for the next class", owner, t0, "");
      } catch (Exception | AssertionError e) {
        System.err.println(
            "cluster suite: the reset failed, the next class gets a new cluster: " + e);
        last = true;
      }
    }
    // the last class, or one whose reset failed (the release may still run)
    Throwable failed;
    try {
      failed = takeOff(last);
    } finally {
      if (last) {
        ClusterShared.closeCurrent(null);
      }
    }
    if (failed instanceof Exception e) {
      throw e;
    }
    if (failed != null) {
      throw (AssertionError) failed;
    }
  }

  /**
   * Takes this class's release off the node: when {@code last} (the cluster closes next)
   * uninstalled and its plugin gone; in any case the class's proxies, cgroups and directory
   * removed. Returns a failed uninstall (the API server unreachable), which must not stop the rest.
   */
  private Throwable takeOff(boolean last) throws Exception {
    Throwable failed = null;
    if (System.getProperty("efscsi.cluster.keep") != null) {
      return null;
    }
    if (last && helm != null) {
      try {
        helm.uninstall();
        helm = null;
      } catch (Exception | AssertionError e) {
        failed = e;
      }
    }
    if (last) {
      // helm waits for the DaemonSet, not its pod: a plugin still shutting down would restart the
      // proxies stopped next
      awaitNoPlugin();
    }
    try {
      ClusterHostPaths.cleanUp(work);
    } finally {
      // the class's directory goes even when a proxy or cgroup stays (the run fails on those)
      HostCleanup.deleteTree(work);
    }
    return failed;
  }

  /** Until no node plugin JVM of this cluster runs (60 s at most: the cleanup goes on after). */
  private void awaitNoPlugin() throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!ClusterDriverSupport.pidsWith(
                "io.efscsi.launcher.Main", "--kubelet-root-dir=" + cluster.kubeletDir())
            .isEmpty()
        && System.nanoTime() < end) {
      Thread.sleep(250);
    }
  }

  private void reset() throws Exception {
    var pods = admin.pods().inNamespace("default");
    pods.withGracePeriod(0).delete();
    admin.persistentVolumeClaims().inNamespace("default").delete();
    admin.serviceAccounts().inNamespace("default").withName("scraper").delete();
    // the kubelet unpublishes and unstages through this release's plugin before it goes
    awaitEmpty("CSI volumes still mounted by the kubelet", () -> !csiMounts().isEmpty());
    admin.persistentVolumes().delete();
    if (helm != null) {
      helm.uninstall();
      helm = null;
    }
    admin.storage().v1().csiDrivers().withName(DRIVER).delete();
    admin.pods().inNamespace(NS).withGracePeriod(0).delete();
    awaitEmpty(
        "pods, PVs or the plugin's JVM still there",
        () ->
            !pods.list().getItems().isEmpty()
                || !admin.pods().inNamespace(NS).list().getItems().isEmpty()
                || !admin.persistentVolumes().list().getItems().isEmpty()
                || !ClusterDriverSupport.pidsWith(
                        "io.efscsi.launcher.Main", "--kubelet-root-dir=" + cluster.kubeletDir())
                    .isEmpty());
    // the file system's root as a new file system has it
    Path root = test.resolve("root");
    HostCleanup.deleteTree(root);
    Files.createDirectories(root);
  }

  /** The staging and publish mounts of CSI volumes under the kubelet's directory. */
  private List<String> csiMounts() throws IOException {
    String kubelet = cluster.kubeletDir() + "/";
    return new ProcMountTable(ProcMountTable.SELF)
        .read().stream()
            .map(m -> m.mountPoint())
            .filter(m -> m.startsWith(kubelet))
            .filter(m -> m.contains("/kubernetes.io/csi/") || m.contains("/kubernetes.io~csi/"))
            .toList();
  }

  private interface Check {
    boolean notYet() throws Exception;
  }

  private void awaitEmpty(String what, Check check) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (check.notYet()) {
      if (System.nanoTime() > end) {
        throw new AssertionError(
            what + " 120 s after the class: " + ClusterDriverSupport.diagnostics(admin));
      }
      Thread.sleep(250);
    }
  }
}

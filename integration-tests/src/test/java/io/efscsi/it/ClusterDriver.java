package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.emulator.EfsEmulator;
import io.efscsi.it.cluster.Cluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
 * ClusterDriverFixture}, one cluster per class. The EFS API is the project's emulator, the mount
 * target a TLS server in front of nfs-ganesha, and the NFS mount command the stand-in (this kernel
 * has no NFS client; the kernel VM suite keeps the real one), which bind-mounts one directory as
 * the file system's root so that pods share data.
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

  private ClusterDriver(Cluster cluster, Path work, String owner) {
    this.cluster = cluster;
    this.admin = cluster.admin();
    this.work = work;
    this.owner = owner;
  }

  /**
   * The cluster up with the chart installed and ready, for test class {@code owner}; closed by
   * {@link #close}.
   */
  static ClusterDriver start(String owner) throws Exception {
    long t0 = System.nanoTime();
    ClusterHostPaths.recordBefore();
    Cluster cluster = Cluster.start();
    ClusterDriver d;
    try {
      d = new ClusterDriver(cluster, Files.createTempDirectory("efscsi-cluster-driver"), owner);
    } catch (IOException | RuntimeException e) {
      cluster.close();
      throw e;
    }
    try {
      d.install(t0);
      return d;
    } catch (Exception | AssertionError e) {
      try {
        d.close();
      } catch (Exception suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private void install(long t0) throws Exception {
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
    phase("cluster start", t0);
    long t1 = System.nanoTime();
    ClusterImages.importInto(cluster, work);
    phase("images imported", t1);
    t1 = System.nanoTime();
    lab = new NfsLab(Files.createDirectories(work.resolve("lab")), 1);
    efs = EfsEmulator.start();
    fsId = efs.createFileSystem();
    efs.addMountTarget(fsId, Cluster.ZONE, "127.0.0.1");
    String name = fsId + ".efs.us-east-1.amazonaws.com";
    lab.selfSigned("mt", name);
    tlsPort = NfsLab.freePort();
    lab.stunnelServer(tlsPort, lab.dir.resolve("mt.crt"), lab.dir.resolve("mt.key"));
    NfsLab.awaitPort(tlsPort, java.time.Duration.ofSeconds(10));
    test = Files.createDirectories(cluster.kubeletDir().resolve("efs-test"));
    Files.createDirectories(test.resolve("root"));
    Files.copy(lab.dir.resolve("mt.crt"), test.resolve("ca.crt"));
    Path mount = test.resolve("fake-nfs-mount");
    try (var in = ClusterDriver.class.getResourceAsStream("/fake-nfs-mount")) {
      Files.write(mount, in.readAllBytes());
    }
    Files.setPosixFilePermissions(mount, PosixFilePermissions.fromString("rwxr-xr-x"));
    helm = new ClusterHelm(cluster, work);
    // docs/install.md's command, the values file an operator on this cluster would write
    helm.install(ClusterDriverSupport.values(this, false));
    ClusterDriverSupport.awaitDriverReady(admin);
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

  @Override
  public void close() throws Exception {
    phases.forEach(p -> System.err.println("cluster suite: " + p));
    System.err.println(ClusterDriverSupport.diagnostics(admin));
    if (System.getProperty("efscsi.cluster.keep") != null) {
      cluster.close(); // says how to reach it and how to stop it
      return;
    }
    try {
      if (helm != null) {
        helm.uninstall();
      }
    } finally {
      admin.close();
      cluster.close();
      ClusterHostPaths.cleanUp(work);
      if (efs != null) {
        efs.close();
      }
      if (lab != null) {
        lab.closeAndDelete();
      }
      HostCleanup.deleteTree(work);
    }
  }
}

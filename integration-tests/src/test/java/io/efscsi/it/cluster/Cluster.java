package io.efscsi.it.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A one-node Kubernetes cluster on this host: the {@link ControlPlane} plus the controller-manager,
 * the scheduler, containerd (Debian's, with its own socket, root and state under the cluster's
 * directory, runc, a bridge pod network of the CNI plugins) and a kubelet (cgroupfs, webhook
 * authentication and authorisation, node {@value ControlPlane#NODE_NAME} with an EKS-style provider
 * id and zone label). Images come from docker-archive tarballs ({@link #importImage}); nothing is
 * pulled. Pods on the pod network reach the host's addresses (the API server's, the kubernetes
 * Service's) but nothing beyond the host; the suites' pods and the node plugin run on the host
 * network. {@link #close()} removes every container, stops every process and removes the directory,
 * mounts included.
 */
public final class Cluster extends ControlPlane {

  /** The cgroup under which the kubelet puts its pods (removed with the cluster). */
  public static final String CGROUP_ROOT = "efs-csi-cluster";

  /** The zone of the node's label and provider id. */
  public static final String ZONE = "us-east-1a";

  /** The node's EC2 instance id, in its provider id. */
  public static final String INSTANCE_ID = "i-0123456789abcdef0";

  /** The controller-manager, the scheduler and the kubelet: stopped before the containers go. */
  private final List<Process> nodeSide = new ArrayList<>();

  private List<String> kubeletCommand;
  private Process kubelet;

  private Cluster(Path dir) {
    super(dir);
  }

  /** Starts the whole cluster and waits until the node is Ready. */
  public static Cluster start() throws IOException, InterruptedException {
    Cluster c = new Cluster(Files.createTempDirectory("efs-csi-cluster-"));
    try {
      long t0 = System.nanoTime();
      c.shareMounts();
      c.startControlPlane();
      c.startControllers();
      c.startContainerd();
      c.importImage(Images.pause(c.dir));
      c.startKubelet();
      c.awaitNodeReady(Duration.ofSeconds(90));
      System.err.printf(
          "cluster up in %.1f s: %s (KUBECONFIG=%s)%n",
          (System.nanoTime() - t0) / 1e9, c.url(), c.dir.resolve("kubeconfig-admin"));
      return c;
    } catch (IOException | InterruptedException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** The pod network's bridge (removed with the cluster). */
  private String bridge() {
    return "efscsi" + subnet;
  }

  /** The kubelet's root directory (the chart's {@code node.kubeletPath}). */
  public Path kubeletDir() {
    return dir.resolve("kubelet");
  }

  /** containerd's socket. */
  public Path containerdSocket() {
    return dir.resolve("containerd/containerd.sock");
  }

  /**
   * The directory bind-mounted on itself and made shared: the node plugin's kubelet directory is
   * mounted with Bidirectional propagation, which needs a shared mount (this machine's / is
   * private).
   */
  private void shareMounts() throws IOException, InterruptedException {
    for (List<String> command :
        List.of(
            List.of("mount", "--bind", dir.toString(), dir.toString()),
            List.of("mount", "--make-rshared", dir.toString()))) {
      Images.Result r = Images.exec(30, command);
      if (r.exit() != 0) {
        throw new IOException(String.join(" ", command) + ": " + r.output());
      }
    }
  }

  private void startControllers() throws IOException, InterruptedException {
    Path kcm = kubeconfig("controller-manager", CONTROLLER_MANAGER_TOKEN);
    nodeSide.add(
        run(
            "kube-controller-manager",
            List.of(
                KubeBinaries.dir().resolve("kube-controller-manager").toString(),
                "--kubeconfig=" + kcm,
                "--authentication-kubeconfig=" + kcm,
                "--authorization-kubeconfig=" + kcm,
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                "--use-service-account-credentials=true",
                "--service-account-private-key-file=" + dir.resolve("sa.key"),
                "--root-ca-file=" + caFile(),
                "--controllers=*,-nodeipam,-ttl,-bootstrapsigner,-tokencleaner,-cloud-node-lifecycle",
                "--leader-elect=false",
                "--v=1")));
    Path sched = kubeconfig("scheduler", SCHEDULER_TOKEN);
    nodeSide.add(
        run(
            "kube-scheduler",
            List.of(
                KubeBinaries.dir().resolve("kube-scheduler").toString(),
                "--kubeconfig=" + sched,
                "--authentication-kubeconfig=" + sched,
                "--authorization-kubeconfig=" + sched,
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                "--leader-elect=false",
                "--v=1")));
  }

  private void startContainerd() throws IOException, InterruptedException {
    Path cd = Files.createDirectories(dir.resolve("containerd"));
    Path cni = Files.createDirectories(dir.resolve("cni"));
    // the pod network: a bridge on the host with a /24 of its own (the API server's address and
    // the emulator's are host addresses, reached through the bridge's gateway); no NAT, no
    // kube-proxy. Pods on the host network (the node plugin, the suites' pods) do not use it; the
    // controller's pods do, as the chart's default (hostNetwork: false) has them.
    Files.writeString(
        cni.resolve("10-efs-csi.conflist"),
        """
        {"cniVersion": "0.4.0", "name": "efs-csi-test", "plugins": [{
          "type": "bridge", "bridge": "%s", "isGateway": true, "ipMasq": false,
          "ipam": {"type": "host-local", "dataDir": "%s",
                   "ranges": [[{"subnet": "198.19.%d.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}
        }]}
        """
            .formatted(bridge(), dir.resolve("cni-ipam"), subnet));
    Files.writeString(
        cd.resolve("config.toml"),
        """
        version = 2
        root = "%1$s/root"
        state = "%1$s/state"
        [grpc]
          address = "%1$s/containerd.sock"
        [plugins."io.containerd.grpc.v1.cri"]
          restrict_oom_score_adj = true
          sandbox_image = "%2$s"
          [plugins."io.containerd.grpc.v1.cri".containerd]
            snapshotter = "overlayfs"
            default_runtime_name = "runc"
            [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
              runtime_type = "io.containerd.runc.v2"
              [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
                SystemdCgroup = false
          [plugins."io.containerd.grpc.v1.cri".cni]
            bin_dir = "/usr/lib/cni"
            conf_dir = "%3$s"
        """
            .formatted(cd, Images.PAUSE, cni));
    processes.add(
        run("containerd", List.of("containerd", "--config", cd.resolve("config.toml").toString())));
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (ctr(10, "version").exit() != 0) {
      if (System.nanoTime() > end) {
        throw new IOException("containerd did not start:\n" + tail(dir.resolve("containerd.log")));
      }
      Thread.sleep(200);
    }
  }

  private void startKubelet() throws IOException, InterruptedException {
    makeCgroupRoot();
    Pki.signed(
        dir,
        "kubelet",
        "/CN=" + NODE_NAME,
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth");
    int port = freePort();
    Path config = dir.resolve("kubelet-config.yaml");
    Files.writeString(
        config,
        """
        apiVersion: kubelet.config.k8s.io/v1beta1
        kind: KubeletConfiguration
        cgroupDriver: cgroupfs
        cgroupRoot: /%5$s
        failSwapOn: false
        address: 127.0.0.1
        port: %2$d
        readOnlyPort: 0
        healthzPort: 0
        authentication:
          anonymous: {enabled: false}
          webhook: {enabled: true}
          x509: {clientCAFile: %1$s/ca.crt}
        authorization: {mode: Webhook}
        tlsCertFile: %1$s/kubelet.crt
        tlsPrivateKeyFile: %1$s/kubelet.key
        providerID: aws:///%3$s/%4$s
        enforceNodeAllocatable: []
        localStorageCapacityIsolation: false
        evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%"}
        imageGCHighThresholdPercent: 100
        resolvConf: /etc/resolv.conf
        serializeImagePulls: false
        syncFrequency: 10s
        fileCheckFrequency: 10s
        nodeStatusUpdateFrequency: 5s
        """
            .formatted(dir, port, ZONE, INSTANCE_ID, CGROUP_ROOT));
    kubeletCommand =
        List.of(
            KubeBinaries.dir().resolve("kubelet").toString(),
            "--config=" + config,
            "--container-runtime-endpoint=unix://" + containerdSocket(),
            "--kubeconfig=" + kubeconfig("node", NODE_TOKEN),
            "--root-dir=" + kubeletDir(),
            "--hostname-override=" + NODE_NAME,
            "--node-labels=topology.kubernetes.io/zone=" + ZONE,
            "--v=1");
    kubelet = run("kubelet", kubeletCommand);
    nodeSide.add(kubelet);
  }

  /**
   * Restarts the kubelet as {@code systemctl restart kubelet} does (SIGTERM, then the same command
   * line): the containers it runs stay, and it finds them again. Returns once the new one is
   * started (not yet serving). Its log goes on in kubelet.log.
   */
  public synchronized void restartKubelet() throws IOException, InterruptedException {
    Process old = kubelet;
    old.destroy();
    if (!old.waitFor(15, TimeUnit.SECONDS)) {
      old.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    nodeSide.remove(old);
    kubelet =
        new ProcessBuilder(kubeletCommand)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("kubelet.log").toFile()))
            .start();
    nodeSide.add(kubelet);
  }

  /** The running kubelet's pid. */
  public long kubeletPid() {
    return kubelet.pid();
  }

  /**
   * SIGKILLs the task of a container ({@code containerd://<id>} or the bare id, as a pod's status
   * names it), as the kernel's OOM killer or a node's {@code kill -9} would.
   */
  public void killContainer(String containerId) throws IOException, InterruptedException {
    String id = containerId.replaceFirst("^containerd://", "");
    Images.Result r = ctr(30, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id);
    if (r.exit() != 0) {
      throw new IOException("cannot kill container " + id + ": " + r.output());
    }
  }

  /** The kubelet's cgroupRoot must exist in every hierarchy (cpuset's with its parent's cpus). */
  private static void makeCgroupRoot() throws IOException {
    try (var roots = Files.list(Path.of("/sys/fs/cgroup"))) {
      for (Path root : roots.toList()) {
        if (!Files.exists(root.resolve("cgroup.procs"))) {
          continue;
        }
        Path group = Files.createDirectories(root.resolve(CGROUP_ROOT));
        for (String f : List.of("cpuset.cpus", "cpuset.mems")) {
          if (Files.exists(root.resolve(f)) && Files.readString(group.resolve(f)).isBlank()) {
            Files.writeString(group.resolve(f), Files.readString(root.resolve(f)).strip());
          }
        }
      }
    }
  }

  private void awaitNodeReady(Duration limit) throws IOException, InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    try (KubernetesClient k = admin()) {
      while (System.nanoTime() < end) {
        Node n = k.nodes().withName(NODE_NAME).get();
        if (n != null
            && n.getStatus() != null
            && n.getStatus().getConditions().stream()
                .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"))
            && (n.getSpec().getTaints() == null
                || n.getSpec().getTaints().stream()
                    .noneMatch(t -> t.getKey().startsWith("node.kubernetes.io/")))) {
          return;
        }
        for (Process p : nodeSide) {
          if (!p.isAlive()) {
            String name = p.info().command().orElse("?");
            throw new IOException(
                "a cluster process exited: "
                    + p.exitValue()
                    + "\n"
                    + tail(dir.resolve("kube-controller-manager.log"))
                    + tail(dir.resolve("kube-scheduler.log"))
                    + tail(dir.resolve("kubelet.log"))
                    + name);
          }
        }
        Thread.sleep(250);
      }
      Node n = k.nodes().withName(NODE_NAME).get();
      throw new IOException(
          "the node was not Ready within "
              + limit
              + ": "
              + (n == null ? "not registered" : conditions(n))
              + "\n"
              + tail(dir.resolve("kubelet.log")));
    }
  }

  private static String conditions(Node n) {
    List<String> out = new ArrayList<>();
    for (NodeCondition c : n.getStatus().getConditions()) {
      out.add(c.getType() + "=" + c.getStatus() + " (" + c.getMessage() + ")");
    }
    return out + " taints " + n.getSpec().getTaints();
  }

  /** Imports a docker-archive tarball into containerd's k8s.io namespace (kubelet's images). */
  public void importImage(Path tarball) throws IOException, InterruptedException {
    Images.Result r = ctr(600, "-n", "k8s.io", "images", "import", tarball.toString());
    if (r.exit() != 0) {
      throw new IOException("cannot import " + tarball + " into containerd: " + r.output());
    }
  }

  Images.Result ctr(long timeoutSeconds, String... args) throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(List.of("ctr", "--address", containerdSocket().toString()));
    command.addAll(List.of(args));
    return Images.exec(timeoutSeconds, command);
  }

  /**
   * Stops the kubelet and the controllers, then kills and removes every container containerd runs
   * (their shims would outlive containerd), stops containerd, etcd and the API server, and removes
   * the directory with what is mounted under it.
   */
  @Override
  public void close() {
    if (System.getProperty("efscsi.cluster.keep") != null) {
      super.close();
      return;
    }
    try {
      // the kubelet and the controllers first, so nothing restarts what is removed next
      for (Process p : nodeSide.reversed()) {
        p.destroy();
        if (!p.waitFor(15, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
      nodeSide.clear();
      removeContainers();
    } catch (IOException e) {
      System.err.println("cannot remove the cluster's containers: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    stopProcesses();
    killOrphanShims();
    try {
      // the shared bind mount of the directory on itself, with what is left mounted below it
      Images.exec(60, List.of("umount", "-l", dir.toString()));
    } catch (IOException e) {
      System.err.println("cannot unmount " + dir + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      Images.Result r = ip("link", "del", bridge());
      if (r.exit() != 0 && !r.output().contains("Cannot find device")) {
        System.err.println("cannot remove the bridge " + bridge() + ": " + r.output());
      }
    } catch (IOException e) {
      System.err.println("cannot remove the bridge " + bridge() + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    super.close();
    try {
      removeCgroupRoot();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Kills this cluster's container shims that outlived containerd: one whose task was removed while
   * containerd stopped can stay, idle, with no container (seen once in a whole run, 2026-12-02).
   * They name containerd's socket under this cluster's directory.
   */
  private void killOrphanShims() {
    String address = "-address " + containerdSocket();
    for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
      String cmd = p.info().commandLine().orElse("");
      if (cmd.contains("containerd-shim") && cmd.contains(address)) {
        System.err.println("cluster: killing a container shim left after containerd: " + cmd);
        p.destroyForcibly();
      }
    }
  }

  /** Removes the kubelet's cgroupRoot (and the pods' groups under it) from every hierarchy. */
  private static void removeCgroupRoot() throws IOException {
    try (var roots = Files.list(Path.of("/sys/fs/cgroup"))) {
      for (Path root : roots.toList()) {
        Path group = root.resolve(CGROUP_ROOT);
        if (!Files.isDirectory(group)) {
          continue;
        }
        List<Path> dirs;
        try (var s = Files.walk(group)) {
          dirs = s.filter(Files::isDirectory).sorted(java.util.Comparator.reverseOrder()).toList();
        }
        for (Path d : dirs) {
          Files.delete(d); // rmdir: fails while a process is left in the group, and says so
        }
      }
    }
  }

  private void removeContainers() throws IOException, InterruptedException {
    Images.Result tasks = ctr(30, "-n", "k8s.io", "tasks", "ls", "-q");
    for (String id : tasks.output().lines().filter(l -> !l.isBlank()).toList()) {
      ctr(30, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id);
    }
    Thread.sleep(500);
    for (String id : tasks.output().lines().filter(l -> !l.isBlank()).toList()) {
      ctr(30, "-n", "k8s.io", "tasks", "rm", "-f", id);
    }
    Images.Result containers = ctr(30, "-n", "k8s.io", "containers", "ls", "-q");
    for (String id : containers.output().lines().filter(l -> !l.isBlank()).toList()) {
      ctr(30, "-n", "k8s.io", "containers", "rm", id);
    }
  }
}

package io.efscsi.it;

import io.efscsi.emulator.EfsEmulator;
import io.efscsi.it.cluster.Cluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * What the cluster classes share ({@link ClusterDriver}), started by the first of them and closed
 * after the last ({@link #expect}): the cluster with the images imported, the EFS emulator with the
 * file system, the mount target (stunnel in front of nfs-ganesha) and what the node container sees
 * under the kubelet directory. Each class still gets a release of its own, its own state directory
 * and a node that the class before left as a fresh cluster has it ({@link ClusterDriver#close}).
 */
final class ClusterShared implements AutoCloseable {

  Cluster cluster;
  KubernetesClient admin;
  Path work;
  NfsLab lab;
  EfsEmulator efs;
  String fsId;

  /** What the node container sees under the kubelet directory: the fake NFS root, CA, script. */
  Path test;

  int tlsPort;

  /** The shared part while a cluster class runs or another is still to come; else null. */
  private static ClusterShared current;

  /** The cluster classes still to run in this JUnit run ({@link ClusterClassOrder}). */
  private static final Set<String> pending = new java.util.LinkedHashSet<>();

  /** Whether a class's start has already had a new cluster ({@link #recovery}): once per run. */
  private static boolean recovered;

  private ClusterShared() {}

  /**
   * The cluster classes this run holds, told by {@link ClusterClassOrder}, which runs them one
   * after the other: the cluster they share stays up until the last of them ends. Without it
   * (another orderer, a class on its own) each class closes the cluster when it ends, as before.
   */
  static synchronized void expect(java.util.Collection<String> classes) {
    pending.clear();
    pending.addAll(classes);
  }

  /** The shared part, started for {@code owner} (the time table's rows name it) if none runs. */
  static synchronized ClusterShared get(String owner) throws Exception {
    if (current == null) {
      current = start(owner);
    }
    return current;
  }

  /**
   * Class {@code owner} has ended: whether it was the last to share the cluster (or the cluster is
   * kept), so that the cluster closes ({@link #closeCurrent}) after its release.
   */
  static synchronized boolean ended(String owner) {
    pending.remove(owner);
    return pending.isEmpty() || System.getProperty("efscsi.cluster.keep") != null;
  }

  /** Closes the shared part, if one runs; {@code cause} (may be null) gets a failure to close. */
  static synchronized void closeCurrent(Throwable cause) throws Exception {
    ClusterShared s = current;
    current = null;
    if (s == null) {
      return;
    }
    if (cause == null) {
      s.close();
    } else {
      closeAfter(s, cause);
    }
  }

  /**
   * Whether {@code owner}'s start, which found the driver not ready ({@code e}), gets a new
   * cluster: the first time in a run only. It says so on stderr and in target/recovered.txt, which
   * scripts/test prints at the run's end.
   */
  static synchronized boolean recovery(String owner, Throwable e) {
    if (recovered) {
      return false;
    }
    recovered = true;
    String text =
        "cluster suite: "
            + owner
            + "'s start found the driver not ready; the class runs on a new cluster:\n"
            + e.getMessage()
            + "\n";
    System.err.print(text);
    try {
      Path file = Path.of(System.getProperty("user.dir"), "target", "recovered.txt");
      Files.writeString(
          file,
          text,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException io) {
      e.addSuppressed(io);
    }
    return true;
  }

  private static ClusterShared start(String owner) throws Exception {
    long t0 = System.nanoTime();
    ClusterHostPaths.recordBefore();
    ClusterShared s = new ClusterShared();
    s.cluster = Cluster.start();
    try {
      s.admin = s.cluster.admin();
      s.work = Files.createTempDirectory("efscsi-cluster-shared");
      TestTimes.since("cluster start", owner, t0, "");
      long t1 = System.nanoTime();
      ClusterImages.importInto(s.cluster, s.work);
      TestTimes.since("images imported", owner, t1, "");
      s.lab = new NfsLab(Files.createDirectories(s.work.resolve("lab")), 1);
      // on the API server's address: the controller's pods on the pod network reach it there
      s.efs = EfsEmulator.start(java.net.InetAddress.getByName(s.cluster.apiHost()), 0);
      s.fsId = s.efs.createFileSystem();
      s.efs.addMountTarget(s.fsId, Cluster.ZONE, "127.0.0.1");
      String name = s.fsId + ".efs.us-east-1.amazonaws.com";
      s.lab.selfSigned("mt", name);
      s.tlsPort = NfsLab.freePort();
      s.lab.stunnelServer(s.tlsPort, s.lab.dir.resolve("mt.crt"), s.lab.dir.resolve("mt.key"));
      NfsLab.awaitPort(s.tlsPort, java.time.Duration.ofSeconds(10));
      s.test = Files.createDirectories(s.cluster.kubeletDir().resolve("efs-test"));
      Files.createDirectories(s.test.resolve("root"));
      Files.copy(s.lab.dir.resolve("mt.crt"), s.test.resolve("ca.crt"));
      Path mount = s.test.resolve("fake-nfs-mount");
      try (var in = ClusterShared.class.getResourceAsStream("/fake-nfs-mount")) {
        Files.write(mount, in.readAllBytes());
      }
      Files.setPosixFilePermissions(mount, PosixFilePermissions.fromString("rwxr-xr-x"));
      return s;
    } catch (Exception | AssertionError e) {
      closeAfter(s, e);
      throw e;
    }
  }

  /** Closes {@code c} after {@code e}, a failure to close added to it. */
  static void closeAfter(AutoCloseable c, Throwable e) {
    try {
      c.close();
    } catch (Exception suppressed) {
      e.addSuppressed(suppressed);
    }
  }

  @Override
  public void close() throws Exception {
    if (System.getProperty("efscsi.cluster.keep") != null) {
      cluster.close(); // says how to reach it and how to stop it
      return;
    }
    try {
      if (admin != null) {
        admin.close();
      }
      cluster.close();
      ClusterHostPaths.cleanUp(null);
    } finally {
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

package io.efscsi.it;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * What {@link ClusterFaultsIT} does to the cluster and reads back: the provisioner's leader, the
 * kill of a pod's containers, the PersistentVolumes as they come and go (a watch, with the time
 * each event arrived), the writer pods' logs on the host, and the figures the class prints.
 */
final class ClusterFaults {

  /** The external-provisioner's lease: the driver's name, sanitised by csi-lib-utils. */
  static final String PROVISIONER_LEASE = "efs-csi-aws-com";

  private final ClusterDriver d;

  /** The figures, in the order measured: printed at the end and in the time table's notes. */
  final Map<String, String> figures = new LinkedHashMap<>();

  ClusterFaults(ClusterDriver d) {
    this.d = d;
  }

  void figure(String name, Object value) {
    figures.put(name, String.valueOf(value));
    System.err.println("cluster faults: " + name + " = " + value);
  }

  /** The controller Deployment's pods that are not being deleted. */
  List<Pod> controllerPods() {
    return d
        .admin
        .pods()
        .inNamespace(ClusterDriver.NS)
        .withLabel("app", "efs-csi-controller")
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  /**
   * The lease's holder: the external-provisioner's identity (a start time, a random number and the
   * driver's name: each start of the sidecar is a new one), or empty.
   */
  String holder() {
    var lease = d.admin.leases().inNamespace(ClusterDriver.NS).withName(PROVISIONER_LEASE).get();
    return lease == null || lease.getSpec().getHolderIdentity() == null
        ? ""
        : lease.getSpec().getHolderIdentity();
  }

  /** Waits until a provisioner other than {@code not} (an identity, or "") holds the lease. */
  String awaitHolderOtherThan(String not, long seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      String h = holder();
      if (!h.isEmpty() && !h.equals(not)) {
        return h;
      }
      Thread.sleep(100);
    }
    throw new AssertionError(
        "no provisioner but '"
            + not
            + "' took the lease within "
            + seconds
            + " s: "
            + d.admin.leases().inNamespace(ClusterDriver.NS).list().getItems().stream()
                .map(l -> l.getMetadata().getName() + "=" + l.getSpec().getHolderIdentity())
                .toList());
  }

  /**
   * The controller pod whose running external-provisioner leads: the lease names no pod, so the one
   * whose sidecar logged that it acquired it (since its start).
   */
  String leaderPod() throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < end) {
      for (Pod p : controllerPods()) {
        try {
          String log =
              d.admin
                  .pods()
                  .inNamespace(ClusterDriver.NS)
                  .withName(p.getMetadata().getName())
                  .inContainer("csi-provisioner")
                  .getLog();
          if (log.contains(
              "successfully acquired lease " + ClusterDriver.NS + "/" + PROVISIONER_LEASE)) {
            return p.getMetadata().getName();
          }
        } catch (RuntimeException e) {
          // a container starting: no log yet
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no controller pod's provisioner says it leads");
  }

  /** SIGKILLs every container of pod {@code name} in kube-system (they restart in place). */
  void killContainers(String name) throws IOException, InterruptedException {
    Pod p = d.admin.pods().inNamespace(ClusterDriver.NS).withName(name).get();
    for (var c : p.getStatus().getContainerStatuses()) {
      if (c.getContainerID() != null && c.getState().getRunning() != null) {
        d.cluster.killContainer(c.getContainerID());
      }
    }
  }

  /** A claim of efs-sc in namespace default, labelled {@code fault=<group>}. */
  void createClaim(String name, String group) {
    d.admin.resource(ClusterDriverSupport.claim(name, Map.of("fault", group), "1Gi")).create();
  }

  /** Waits until claim {@code name} is Bound; returns its PV's name. */
  String awaitBound(String name, long seconds) {
    return d.admin
        .persistentVolumeClaims()
        .inNamespace("default")
        .withName(name)
        .waitUntilCondition(
            c -> c != null && "Bound".equals(c.getStatus().getPhase()), seconds, TimeUnit.SECONDS)
        .getSpec()
        .getVolumeName();
  }

  /** The PVs of claims labelled with {@code group} in default (by claim name in their claimRef). */
  List<PersistentVolume> volumesOf(String claimPrefix) {
    return d.admin.persistentVolumes().list().getItems().stream()
        .filter(v ->
            v.getSpec().getClaimRef() != null
                && v.getSpec().getClaimRef().getName().startsWith(claimPrefix))
        .toList();
  }

  /** A PV event as the watch delivered it, with the time it arrived. */
  record VolumeEvent(Watcher.Action action, String name, long nanos) {}

  /** Every ADDED and DELETED event of some PersistentVolumes from now until closed. */
  static final class VolumeWatch implements AutoCloseable {
    final List<VolumeEvent> events = new CopyOnWriteArrayList<>();
    private final Watch watch;

    /** The PVs of claims whose name starts with {@code claimPrefix}. */
    VolumeWatch(ClusterDriver d, String claimPrefix) {
      watch =
          d.admin
              .persistentVolumes()
              .watch(
                  new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, PersistentVolume pv) {
                      if ((action == Action.ADDED || action == Action.DELETED)
                          && pv.getSpec().getClaimRef() != null
                          && pv.getSpec().getClaimRef().getName().startsWith(claimPrefix)) {
                        events.add(
                            new VolumeEvent(action, pv.getMetadata().getName(), System.nanoTime()));
                      }
                    }

                    @Override
                    public void onClose(WatcherException cause) {}
                  });
    }

    long count(Watcher.Action action) {
      return events.stream().filter(e -> e.action() == action).count();
    }

    /** The first event of {@code action} that arrived after {@code nanos}, as ms after it. */
    OptionalMs firstAfter(Watcher.Action action, long nanos) {
      return events.stream()
          .filter(e -> e.action() == action && e.nanos() > nanos)
          .findFirst()
          .map(e -> new OptionalMs((e.nanos() - nanos) / 1_000_000))
          .orElse(new OptionalMs(-1));
    }

    @Override
    public void close() {
      watch.close();
    }
  }

  /** A time in ms, or -1 when the event never came. */
  record OptionalMs(long ms) {
    @Override
    public String toString() {
      return ms < 0 ? "never" : ms + " ms";
    }
  }

  /** Waits until {@code done}, failing with {@code what} after {@code seconds}. */
  static void await(String what, long seconds, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError(what + " within " + seconds + " s");
      }
      Thread.sleep(100);
    }
  }

  /**
   * A pod script that appends {@code <n> <epoch s> <errors so far>} to /data/{@code file} every 200
   * ms and syncs it, counting the writes that fail.
   */
  static String writerScript(String file) {
    return "n=0; e=0; while true; do n=$((n+1));"
        + " if ! { echo \"$n $(date +%s) $e\" >> /data/"
        + file
        + " && sync; }; then e=$((e+1)); fi; sleep 0.2; done";
  }

  /** The lines the writer wrote to {@code file} at the file system's root, read on the host. */
  List<String[]> writerLines(String file) throws IOException {
    // the stand-in gives each volume a root of its own (root/.port-<its proxy's port>)
    Path p = d.test.resolve("root").resolve(file);
    try (var dirs = Files.list(d.test.resolve("root"))) {
      for (Path dir : dirs.filter(x -> x.getFileName().toString().startsWith(".port-")).toList()) {
        if (Files.exists(dir.resolve(file))) {
          p = dir.resolve(file);
        }
      }
    }
    List<String[]> out = new ArrayList<>();
    if (!Files.exists(p)) {
      return out;
    }
    for (String line : Files.readAllLines(p)) {
      String[] f = line.trim().split(" ");
      if (f.length == 3) {
        out.add(f);
      }
    }
    return out;
  }

  /** The writer's error count in its last line, and how many writes it made. */
  long[] writerProgress(String file) throws IOException {
    List<String[]> lines = writerLines(file);
    if (lines.isEmpty()) {
      return new long[] {0, 0};
    }
    String[] last = lines.getLast();
    return new long[] {Long.parseLong(last[0]), Long.parseLong(last[2])};
  }

  /** The node plugin container's status in the node pod. */
  static io.fabric8.kubernetes.api.model.ContainerStatus plugin(Pod nodePod) {
    return nodePod.getStatus().getContainerStatuses().stream()
        .filter(c -> c.getName().equals("efs-plugin"))
        .findFirst()
        .orElseThrow();
  }

  /** The mount points under the kubelet's directory whose source names this cluster's stand-in. */
  List<String> csiMounts() throws IOException {
    String kubelet = d.cluster.kubeletDir() + "/";
    return new io.efscsi.supervisor.host.ProcMountTable(
            io.efscsi.supervisor.host.ProcMountTable.SELF)
        .read().stream()
            .map(m -> m.mountPoint())
            .filter(m -> m.startsWith(kubelet))
            .filter(m -> m.contains("/kubernetes.io/csi/") || m.contains("/kubernetes.io~csi/"))
            .sorted()
            .toList();
  }
}

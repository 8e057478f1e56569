package io.efscsi.node.events;

import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountTable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the supervisor hears about a proxy, as Kubernetes Events: ProxyRestarted, ProxyOOMKilled,
 * ProxyCrashLooping, OrphanMountUnmounted, MountTargetUnreachable and MountTargetReachable. The
 * pods whose volume it serves (their targets carry its port in the mount table) get it on their Pod
 * when their names are known ({@link PublishedPods}); and the Node gets one per PersistentVolume,
 * naming it and the uids of the pods using it on the node (the only trace for pods published before
 * a plugin restart). Sent from a thread of its own with a bounded queue (the supervisor calls its
 * listener holding a proxy's lock; an API server that is slow or gone must never hold it up),
 * aggregated and rate-limited by {@link PodEvents}.
 */
public final class ProxyEvents implements ProxySupervisor.Listener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyEvents.class);
  private final PodEvents events;
  private final MountTable table;
  private final ThreadPoolExecutor sender =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.SECONDS,
          new ArrayBlockingQueue<>(256),
          Thread.ofPlatform().name("proxy-events").daemon().factory(),
          (task, pool) -> LOG.debug("event queue full; an event was dropped"));

  public ProxyEvents(PodEvents events, MountTable table) {
    this.events = events;
    this.table = table;
  }

  @Override
  public void restarted(String key, int port, String reason, long restarts) {
    send(
        port,
        List.of(),
        "ProxyRestarted",
        "the NFS proxy of this volume (127.0.0.1:"
            + port
            + ") "
            + reason
            + "; restarted on the same port (restart "
            + restarts
            + ")");
  }

  @Override
  public void crashLooping(String key, int port, String lastExit) {
    send(
        port,
        List.of(),
        "ProxyCrashLooping",
        "the NFS proxy of this volume (127.0.0.1:"
            + port
            + ") keeps exiting; last: "
            + lastExit
            + ". I/O on the volume fails or hangs until it stays up; see efs-csi status on the node");
  }

  @Override
  public void oomKilled(String key, int port) {
    send(
        port,
        List.of(),
        "ProxyOOMKilled",
        "the NFS proxy of this volume (127.0.0.1:"
            + port
            + ") was killed by the kernel's OOM killer in its cgroup (node.proxy.memoryLimit);"
            + " it is restarted on the same port");
  }

  @Override
  public void orphanUnmounted(int port, List<String> mountPoints) {
    send(
        port,
        mountPoints,
        "OrphanMountUnmounted",
        "a mount of this volume through 127.0.0.1:"
            + port
            + " had no proxy and no user; it was lazily unmounted");
  }

  @Override
  public void targetUnreachable(String key, int port, String reason) {
    send(
        port,
        List.of(),
        "MountTargetUnreachable",
        "the EFS mount target of this volume is unreachable from this node ("
            + reason
            + "); its proxy (127.0.0.1:"
            + port
            + ") is fine and stays up. I/O fails (soft mounts) or waits (hard mounts) until the"
            + " target answers: check the mount target, its security group and the network");
  }

  @Override
  public void targetReachable(String key, int port, java.time.Duration down) {
    send(
        port,
        List.of(),
        PodEvents.Type.Normal,
        "MountTargetReachable",
        "the EFS mount target of this volume answers again after "
            + down.toSeconds()
            + " s unreachable");
  }

  @Override
  public void upgraded(
      String key, int port, String from, String to, java.time.Duration took, long connections) {
    send(
        port,
        List.of(),
        PodEvents.Type.Normal,
        "ProxyUpgraded",
        "the proxy of this volume (127.0.0.1:"
            + port
            + ") moved from build "
            + (from.isEmpty() ? "of an earlier release" : from)
            + " to "
            + to
            + " (this plugin's) in "
            + took.toMillis()
            + " ms on the same port; "
            + connections
            + " kernel connections reconnected to it");
  }

  @Override
  public void upgradeFailed(String key, int port, String reason) {
    send(
        port,
        List.of(),
        "ProxyUpgradeFailed",
        "the proxy of this volume (127.0.0.1:"
            + port
            + ") could not be moved to this plugin's release and runs on, on its own ("
            + reason
            + "); it is tried again in an hour");
  }

  private void send(int port, List<String> known, String reason, String message) {
    send(port, known, PodEvents.Type.Warning, reason, message);
  }

  private void send(
      int port, List<String> known, PodEvents.Type type, String reason, String message) {
    sender.execute(() -> {
      try {
        Set<String> targets = new LinkedHashSet<>(known);
        if (known.isEmpty()) {
          for (MountInfo m : table.read()) {
            if (m.loopbackPort().orElse(-1) == port) {
              targets.add(m.mountPoint());
            }
          }
        }
        Map<String, List<String>> podsByVolume = new LinkedHashMap<>();
        for (String t : targets) {
          Optional<PodTarget> pt = PodTarget.parse(t);
          if (pt.isEmpty()) {
            continue;
          }
          podsByVolume
              .computeIfAbsent(pt.get().volume(), v -> new ArrayList<>())
              .add(pt.get().podUid());
          if (events.knowsPodOf(t)) {
            events.record(t, type, reason, message);
          }
        }
        podsByVolume.forEach((pv, uids) ->
            events.recordOnVolume(
                pv,
                type,
                reason,
                message + " (pods on this node using it: " + String.join(", ", uids) + ")"));
      } catch (Exception e) {
        LOG.debug("no {} event for port {}: {}", reason, port, e.toString());
      }
    });
  }

  /** Waits for queued events (tests). */
  void drain() throws Exception {
    sender.submit(() -> {}).get();
  }

  @Override
  public void close() {
    sender.shutdownNow();
  }
}

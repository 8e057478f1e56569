package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.host.MountPresence;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a supervisor does when it starts: takes back every proxy the state dir records (live ones
 * untouched, dead wanted ones restarted on their port) and repairs what a plugin killed mid-call
 * left: processes in a proxy's group the record does not name and releases that stopped half-way.
 * Runs before the first reconcile and before any CSI call is served.
 */
final class Adoption {

  private static final Logger LOG = LoggerFactory.getLogger(Adoption.class);

  private final ProxyContext ctx;
  private final StateStore store;
  private final PortAllocator ports;
  private final MountPresence presence;
  private final Map<String, Supervised> byKey;
  private final Object lock;
  private final ProxyContext.Fleet fleet;

  /**
   * @param byKey the supervisor's proxies by key, filled here under {@code lock}
   * @param lock the supervisor's lock, which guards {@code byKey}
   */
  Adoption(
      ProxyContext ctx,
      StateStore store,
      PortAllocator ports,
      MountPresence presence,
      Map<String, Supervised> byKey,
      Object lock,
      ProxyContext.Fleet fleet) {
    this.ctx = ctx;
    this.store = store;
    this.ports = ports;
    this.presence = presence;
    this.byKey = byKey;
    this.lock = lock;
    this.fleet = fleet;
  }

  void run() throws IOException {
    List<Supervised> toRestart = new ArrayList<>();
    List<Supervised> unwanted = new ArrayList<>();
    synchronized (lock) {
      for (ProxyRecord listed : store.list()) {
        ProxyRecord r = listed;
        if (r.move().isPresent()) {
          r = MoveRecovery.recover(ctx, r);
          store.write(r);
        }
        if (byKey.containsKey(r.key())) {
          LOG.error(
              "two state records for key {}; keeping port {}, dropping {}",
              r.key(),
              byKey.get(r.key()).port(),
              r.port());
          // its group goes first: a record is deleted only once nothing it names is left
          Placement dropped = placementOf(r);
          killAll(dropped, ctx.processes(), "dropped record " + r.id());
          dropped.remove();
          store.delete(r.id());
          continue;
        }
        ports.hold(r.port());
        presence.watch(r.port());
        Supervised s = new Supervised(ctx, r, placementOf(r));
        byKey.put(r.key(), s);
        if (s.adoptIfAlive()) {
          ctx.stats().adopted.incrementAndGet();
          LOG.info("adopted proxy for port {} (pid {}, key {})", r.port(), r.pid(), r.key());
        } else {
          killAll(
              s.placement(),
              ctx.processes(),
              "proxy for port "
                  + r.port()
                  + ": started by a plugin that stopped before recording it");
          if (r.wanted()) {
            toRestart.add(s);
          }
        }
        if (!r.wanted()) {
          unwanted.add(s);
        }
      }
    }
    for (Supervised s : toRestart) {
      ctx.stats().adoptionRestarts.incrementAndGet();
      s.restartNow("was not running when the supervisor started");
    }
    finishInterruptedReleases(unwanted);
  }

  /**
   * The group a record names; a record written before its group was (a plugin killed between
   * creating the group and recording it, found by NodeCrashIT) gets the group its name gives, so
   * strays in it are found and the group is removed with the proxy.
   */
  private Placement placementOf(ProxyRecord r) {
    if (!r.cgroup().isEmpty()) {
      return ctx.placer().existing(r.cgroup());
    }
    try {
      return ctx.placer().place(r.id(), ctx.config().limits());
    } catch (IOException | RuntimeException e) {
      return ctx.placer().existing(r.cgroup());
    }
  }

  /**
   * Proxies without users are ones whose release a crash interrupted (their last user was removed,
   * the proxy not yet stopped or its record not yet deleted): finished now as {@link
   * ProxySupervisor#release} would have, when no mount carries the port; otherwise left to the
   * reconciler, which unmounts an orphan before the port is released.
   */
  private void finishInterruptedReleases(List<Supervised> unwanted) throws IOException {
    if (unwanted.isEmpty()) {
      return;
    }
    Set<Integer> mounted = fleet.mountedPorts();
    for (Supervised s : unwanted) {
      if (mounted.contains(s.port())) {
        LOG.info(
            "proxy for port {} has no users but a mount still carries it; left to the reconciler",
            s.port());
        continue;
      }
      LOG.info(
          "proxy for port {} was being released when the supervisor stopped (no users, no mount);"
              + " finishing the release",
          s.port());
      s.stop();
      fleet.forget(s);
    }
  }

  /**
   * Kills what runs in a group no live record accounts for (left alone, a stray proxy would hold
   * its port and every restart on it would fail to bind). Waits up to 5 s for them to go.
   */
  static void killAll(Placement group, ProcessTable processes, String why) {
    List<Long> strays = group.pids();
    if (strays.isEmpty()) {
      return;
    }
    LOG.warn("{}: killing {} in cgroup {}", why, strays, group.describe());
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!strays.isEmpty() && System.nanoTime() < deadline) {
      strays.forEach(pid -> processes.signal(pid, true));
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      strays = group.pids();
    }
  }
}

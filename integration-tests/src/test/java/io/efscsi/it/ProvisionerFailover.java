package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.Watcher;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;

/**
 * {@link ClusterFaultsIT}'s controller faults (upstream #1467 and #1225): 50 claims created at
 * once, the external-provisioner's leader deleted (graceful) once 8 are bound and the next leader's
 * containers SIGKILLed once 8 more are; then the same for the deletion of all 50. What they must
 * leave: one PV per claim, one access point per PV made for it (its client token and its {@code
 * pv/name} tag), none orphaned, none left after the deletion; the figures printed.
 */
final class ProvisionerFailover {

  private final ClusterDriver d;
  private final ClusterFaults f;

  ProvisionerFailover(ClusterDriver d, ClusterFaults f) {
    this.d = d;
    this.f = f;
  }

  /** Both bursts, each with its two kills, and what they must leave. */
  void run() throws Exception {
    Set<String> before = accessPointIds();
    long calls0 = d.efs.calls("CreateAccessPoint");
    burst(
        "create",
        Watcher.Action.ADDED,
        () -> {
          try (var pool = Executors.newFixedThreadPool(10)) {
            for (int i = 0; i < ClusterFaultsIT.BURST; i++) {
              String name = String.format("burst-%02d", i);
              pool.execute(() -> f.createClaim(name, "burst"));
            }
          }
        },
        () -> {
          for (int i = 0; i < ClusterFaultsIT.BURST; i++) {
            f.awaitBound(String.format("burst-%02d", i), 300);
          }
        });
    List<PersistentVolume> pvs = f.volumesOf("burst-");
    assertEquals(ClusterFaultsIT.BURST, pvs.size(), "one PV per claim");
    Map<String, String> apToPv = new HashMap<>();
    for (PersistentVolume pv : pvs) {
      String handle = pv.getSpec().getCsi().getVolumeHandle();
      String ap = handle.substring(handle.indexOf("::") + 2);
      String twice = apToPv.put(ap, pv.getMetadata().getName());
      assertEquals(null, twice, "access point " + ap + " is in two PVs");
    }
    Set<String> made = new TreeSet<>(accessPointIds());
    made.removeAll(before);
    assertEquals(new TreeSet<>(apToPv.keySet()), made, "the emulator holds exactly the PVs' ones");
    Set<String> tokens = new HashSet<>();
    for (var ap : d.efs.accessPoints(d.fsId)) {
      String id = (String) ap.get("AccessPointId");
      if (!made.contains(id)) {
        continue;
      }
      assertTrue(tokens.add((String) ap.get("ClientToken")), "one access point per token: " + ap);
      assertEquals(apToPv.get(id), tag(ap, "kubernetes.io/created-for/pv/name"), "made for it");
    }
    f.figure("create burst: CreateAccessPoint calls", d.efs.calls("CreateAccessPoint") - calls0);

    burst(
        "delete",
        Watcher.Action.DELETED,
        () ->
            d.admin
                .persistentVolumeClaims()
                .inNamespace("default")
                .withLabel("fault", "burst")
                .delete(),
        () ->
            ClusterFaults.await(
                "every burst PV deleted", 300, () -> f.volumesOf("burst-").isEmpty()));
    ClusterFaults.await(
        "no access point of the burst left", 60, () -> accessPointIds().equals(before));
    f.figure("delete burst: access points left", accessPointIds().size() - before.size());
  }

  private interface Step {
    void run() throws Exception;
  }

  /**
   * One burst: {@code begin} (every claim created, or deleted at once), the leader killed twice in
   * its middle ({@link #killLeaderTwice}) while each EFS call takes 150 ms (a region under load:
   * the burst lasts long enough to be interrupted twice), {@code end} (waits until it is done); the
   * figures printed.
   */
  private void burst(String what, Watcher.Action action, Step begin, Step end) throws Exception {
    String holder = f.awaitHolderOtherThan("", 60);
    d.efs.faults().latency(Duration.ofMillis(150));
    try (var watch = new ClusterFaults.VolumeWatch(d, "burst-")) {
      long t0 = System.nanoTime();
      begin.run();
      Kills kills = killLeaderTwice(watch, action, holder, what);
      end.run();
      String pv = action == Watcher.Action.ADDED ? "next PV" : "next PV deleted";
      f.figure(what + " burst: all 50 done in", ms(t0) + " ms");
      f.figure(what + " burst: done when the leader was deleted", kills.atDelete);
      f.figure(what + " burst: done when the next leader was SIGKILLed", kills.atKill);
      // the deleted leader works on through its grace period; the figure that counts is the next
      // PV after a new leader took over
      f.figure(what + " burst: leader deleted -> " + pv, watch.firstAfter(action, kills.deleted));
      f.figure(
          what + " burst: lease taken after the delete -> " + pv,
          watch.firstAfter(action, kills.taken));
      f.figure(what + " burst: leader SIGKILLed -> " + pv, watch.firstAfter(action, kills.killed));
      f.figure(
          what + " burst: lease taken after the SIGKILL -> " + pv,
          watch.firstAfter(action, kills.retaken));
      assertTrue(
          kills.atKill < ClusterFaultsIT.BURST,
          "the second kill came mid-burst (" + kills.atKill + ")");
    } finally {
      d.efs.faults().latency(Duration.ZERO);
    }
  }

  /** When each kill came (nanoTime) and how many PVs the burst had made or removed by then. */
  private record Kills(
      long deleted, long atDelete, long taken, long killed, long atKill, long retaken) {}

  /**
   * Deletes the leading controller pod once the burst has made 8 PV events of {@code action}, then
   * SIGKILLs the containers of the pod that leads next once 8 more came. {@code holder} is the
   * provisioner leading when the burst began.
   */
  private Kills killLeaderTwice(
      ClusterFaults.VolumeWatch watch, Watcher.Action action, String holder, String what)
      throws Exception {
    ClusterFaults.await(what + ": 8 PVs", 120, () -> watch.count(action) >= 8);
    String pod = f.leaderPod();
    long atDelete = watch.count(action);
    long deleted = System.nanoTime();
    d.admin.pods().inNamespace(ClusterDriver.NS).withName(pod).delete();
    String next = f.awaitHolderOtherThan(holder, 90);
    long taken = System.nanoTime();
    f.figure(what + " burst: leader deleted -> lease taken", ms(deleted) + " ms");
    long target = watch.count(action) + 8;
    ClusterFaults.await(what + ": 8 more PVs", 120, () -> watch.count(action) >= target);
    String nextPod = f.leaderPod();
    long atKill = watch.count(action);
    long killed = System.nanoTime();
    f.killContainers(nextPod);
    f.awaitHolderOtherThan(next, 120);
    long retaken = System.nanoTime();
    f.figure(what + " burst: leader SIGKILLed -> lease taken", ms(killed) + " ms");
    return new Kills(deleted, atDelete, taken, killed, atKill, retaken);
  }

  private Set<String> accessPointIds() {
    Set<String> ids = new TreeSet<>();
    for (var ap : d.efs.accessPoints(d.fsId)) {
      ids.add((String) ap.get("AccessPointId"));
    }
    return ids;
  }

  @SuppressWarnings("unchecked")
  private static String tag(Map<String, Object> ap, String key) {
    for (var t : (List<Map<String, Object>>) ap.get("Tags")) {
      if (key.equals(t.get("Key"))) {
        return (String) t.get("Value");
      }
    }
    return null;
  }

  private static long ms(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.events.KubernetesEventApi;
import io.efscsi.node.events.PodEvents;
import io.efscsi.node.events.PublishedPods;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The faults of the cluster itself, on the shared cluster ({@link ClusterDriver}) with the chart's
 * controller defaults (two replicas on the pod network, the external-provisioner's leader
 * election): the provisioner's leader deleted and SIGKILLed in the middle of a burst of 50 claims
 * and of their deletion; the kubelet restarted on a node with live mounts; the API server away for
 * 60 s while a pod writes and another starts; the node plugin's pod deleted in the middle of a
 * NodeStage, before and after its proxy started. Each prints its figures ({@code cluster faults: …}
 * in the log) and asserts them; docs/reliability.md's "cluster faults" table has them.
 */
@ExtendWith(BuiltImages.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterFaultsIT {

  static final int BURST = 50;

  static ClusterDriver d;
  static ClusterFaults f;

  @BeforeAll
  static void start() throws Exception {
    d = ClusterDriver.start("ClusterFaultsIT", x -> ClusterDriverSupport.values(x, true, true), 2);
    f = new ClusterFaults(d);
  }

  @AfterAll
  static void stop() throws Exception {
    if (f != null) {
      System.err.println("cluster faults: " + f.figures);
    }
    if (d != null) {
      ClusterDriver closing = d;
      d = null;
      closing.close();
    }
  }

  /** The controller's faults ({@link ProvisionerFailover}), on a thread of their own. */
  static java.util.concurrent.CompletableFuture<Void> bursts;

  /**
   * The claims the node's faults use, bound before anything else happens, then the controller's
   * faults begun beside them: a cluster loses a controller while its nodes have faults of their
   * own, and the two share no part here (the bursts' claims have no pods; the node's claims are
   * bound first), so each class of fault costs CI its own length only once.
   */
  @Test
  @Order(1)
  void theControllersFaultsBeginBesideTheNodes() throws Exception {
    assertEquals(2, f.controllerPods().size(), "the chart's two controller replicas");
    for (String claim : List.of("steady", "canary", "held-after", "held-before")) {
      f.createClaim(claim, "node");
    }
    for (String claim : List.of("steady", "canary", "held-after", "held-before")) {
      f.awaitBound(claim, 120);
    }
    // a thread of its own: on 2 cores the common pool has one worker, which fabric8's client
    // needs for its own completions (a burst blocking it timed every API call out)
    bursts = new java.util.concurrent.CompletableFuture<>();
    Thread.ofPlatform()
        .name("controller-faults")
        .daemon()
        .start(() -> {
          try {
            new ProvisionerFailover(d, f).run();
            bursts.complete(null);
          } catch (Throwable e) {
            bursts.completeExceptionally(e);
          }
        });
  }

  /**
   * Upstream #1467 and #1225: a controller restarted in a flood of claims. 50 claims at once; the
   * provisioner's leader deleted (graceful) once about 8 are bound, the next leader's containers
   * SIGKILLed once 8 more are; then the same for the deletion of all 50. Every claim is bound to
   * one PV, every PV has its own access point, the emulator holds exactly those (none orphaned,
   * none twice, each made for its PV), and after the deletion none is left. (Begun in test 1; this
   * waits for it and reports what it found.)
   */
  @Test
  @Order(4)
  void theProvisionersLeaderKilledMidBurstLeavesOneAccessPointPerClaim() throws Throwable {
    try {
      bursts.get(600, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause();
    }
  }

  /** The proxy of the steady volume (test 2 on), and the canary volume's. */
  static long steadyProxy;

  static long canaryProxy;

  /**
   * {@code systemctl restart kubelet} on a node with a live mount and a pod writing to it: the
   * mount and its proxy are untouched, the plugin is not restarted, the new kubelet registers the
   * driver again (the registrar's log says so), and a new pod on a volume not staged yet mounts
   * after it.
   */
  @Test
  @Order(2)
  void aKubeletRestartLeavesMountsProxiesAndThePluginAlone() throws Exception {
    d.runPod("steady-writer", "steady", ClusterFaults.writerScript("steady.log"));
    ClusterFaults.await("the writer writes", 60, () -> progress("steady.log")[0] >= 5);
    Set<Long> proxies = d.proxies();
    assertEquals(1, proxies.size(), "one proxy for the one volume: " + proxies);
    steadyProxy = proxies.iterator().next();
    List<String> mounts = f.csiMounts();
    var node = d.nodePod();
    var plugin = ClusterFaults.plugin(node);
    long registered = registrations(node);
    long t0 = System.nanoTime();
    java.time.Instant restarted =
        java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    d.cluster.restartKubelet();
    ClusterFaults.await(
        "the restarted kubelet registers the driver", 120, () -> registrations(node) > registered);
    f.figure("kubelet restart: -> driver registered again", ms(t0) + " ms");
    // a new kubelet (1.26) keeps no probe result: it marks the node pod unready until its startup
    // and readiness probes pass again (the kubelet's doing: the container is the same)
    ClusterFaults.await(
        "the node pod Ready again after the kubelet's restart",
        120,
        () -> {
          try {
            String since = readySince(d.nodePod(), "Ready");
            return !java.time.Instant.parse(since).isBefore(restarted);
          } catch (RuntimeException | AssertionError e) {
            return false;
          }
        });
    f.figure("kubelet restart: -> node pod Ready again (probes re-run)", ms(t0) + " ms");
    d.runPod("canary", "canary", ClusterFaults.writerScript("canary.log"));
    f.figure("kubelet restart: -> a new pod on a volume not staged yet running", ms(t0) + " ms");
    Set<Long> after = d.proxies();
    assertTrue(after.contains(steadyProxy), "the live volume's proxy untouched: " + after);
    assertEquals(2, after.size(), "one more proxy, for the new volume: " + after);
    canaryProxy = after.stream().filter(p -> p != steadyProxy).findFirst().orElseThrow();
    assertTrue(f.csiMounts().containsAll(mounts), "every mount of before is still there");
    var now = ClusterFaults.plugin(d.nodePod());
    assertEquals(plugin.getContainerID(), now.getContainerID(), "the plugin not restarted");
    assertEquals(plugin.getRestartCount(), now.getRestartCount());
    long[] w = progress("steady.log");
    f.figure("kubelet restart: writer's writes / errors", w[0] + " / " + w[1]);
    assertEquals(0, w[1], "the writer's errors");
  }

  /**
   * A control plane upgrade: the API server away for 60 s while a pod writes to a volume and
   * another starts on it (scheduled just before). The data path does not notice (the volume's proxy
   * the same process, the writer's writes go on with no error), the plugin is neither restarted nor
   * unready; what needs the API fails closed and catches up: a /metrics scrape with a token not
   * reviewed before is refused (503) and served after, and an event recorded during the outage is
   * posted, with the time it happened, once the API server is back. A proxy SIGKILLed during the
   * outage is restarted by the supervisor, which needs no API.
   */
  @Test
  @Order(5)
  void theApiServerAwayForAMinuteStopsNothingAndWhatNeedsItCatchesUp() throws Exception {
    d.createScraper();
    String token = d.scraperToken(900);
    // a token never shown before the outage: no answer about it is cached (another lifetime: two
    // requests in one second for the same lifetime give the same token)
    String fresh = d.scraperToken(960);
    assertTrue(!fresh.equals(token));
    String url = "https://127.0.0.1:3302/metrics";
    ClusterFaults.await("the node's /metrics answers 200", 60, () -> scrape(url, token) == 200);
    var node = d.nodePod();
    var plugin = ClusterFaults.plugin(node);
    // the plugin's own readiness: its containers' (a node marked NotReady makes its pods unready
    // whatever their containers say)
    String readySince = readySince(node, "ContainersReady");
    d.createPod("starter", "steady", "cat /data/steady.log > /dev/null && sleep 3600");
    d.admin
        .pods()
        .inNamespace("default")
        .withName("starter")
        .waitUntilCondition(
            p -> p != null && p.getSpec().getNodeName() != null, 30, TimeUnit.SECONDS);
    Set<Long> others = new TreeSet<>(d.proxies());
    assertTrue(others.remove(canaryProxy), "the canary's proxy runs: " + others);
    long[] w0 = progress("steady.log");
    java.time.Instant down = java.time.Instant.now();
    long t0 = System.nanoTime();
    var eventsClient = d.cluster.admin();
    var events =
        new PodEvents(
            new KubernetesEventApi(() -> eventsClient),
            new PublishedPods(),
            "localhost",
            java.time.Clock.systemUTC());
    d.cluster.stopApiServer();
    long[] wMid;
    long[] w1;
    try {
      // the answer about a token seen a moment ago is kept (2 min, as the kubelet's webhook
      // authenticator keeps it); a token never seen cannot be reviewed: refused
      int cached = scrape(url, token);
      f.figure("API away: /metrics with a token reviewed before", "HTTP " + cached);
      int refused = scrape(url, fresh);
      f.figure("API away: /metrics with a token never reviewed", "HTTP " + refused);
      assertTrue(refused == 401 || refused == 403 || refused == 503, "fails closed: " + refused);
      // a proxy exits while the API server is away: the supervisor restarts it without the API
      assertTrue(ProcessHandle.of(canaryProxy).orElseThrow().destroyForcibly());
      // the plugin's ProxyRestarted event names the pods whose mounts carry the proxy's port: the
      // stand-in mount here (a bind mount) carries none, so the plugin posts none. The same
      // PodEvents, on a client of this API server, shows what happens to an event meanwhile
      assertFalse(
          events.recordOnVolume(
              "canary", PodEvents.Type.Warning, "ProxyRestarted", "restarted during the outage"),
          "not posted while the API server is away");
      wMid = progress("steady.log");
      TimeUnit.NANOSECONDS.sleep(
          Math.max(0, TimeUnit.SECONDS.toNanos(60) - (System.nanoTime() - t0)));
      w1 = progress("steady.log");
    } finally {
      d.cluster.startApiServer();
    }
    java.time.Instant up = java.time.Instant.now();
    long t1 = System.nanoTime();
    f.figure("API away: away for", (t1 - t0) / 1_000_000 + " ms");
    f.figure("API away: writer's writes while away", (w1[0] - w0[0]) + " (" + wMid[0] + ")");
    assertTrue(w1[0] - w0[0] >= 100, "the writer wrote on: " + w0[0] + " -> " + w1[0]);
    ClusterFaults.await("/metrics served again", 120, () -> scrape(url, fresh) == 200);
    f.figure("API back: -> /metrics 200", ms(t1) + " ms");
    // the plugin tries waiting events again every 5 s; here once
    assertEquals(1, events.flush(), "the outage's event posted once the API server answers");
    f.figure("API back: -> the outage's event posted", ms(t1) + " ms");
    var posted = restartedEvents(down);
    assertEquals(1, posted.size(), "" + posted);
    assertTrue(
        java.time.Instant.parse(posted.getFirst().getLastTimestamp()).isBefore(up),
        "it says when it happened: " + posted.getFirst().getLastTimestamp());
    eventsClient.close();
    var pod =
        d.admin
            .pods()
            .inNamespace("default")
            .withName("starter")
            .waitUntilCondition(
                p -> p != null && "Running".equals(p.getStatus().getPhase()),
                120,
                TimeUnit.SECONDS);
    java.time.Instant started =
        java.time.Instant.parse(
            pod.getStatus()
                .getContainerStatuses()
                .getFirst()
                .getState()
                .getRunning()
                .getStartedAt());
    f.figure(
        "API away: the starting pod's container started",
        started.isBefore(up)
            ? (started.toEpochMilli() - down.toEpochMilli()) + " ms into the outage"
            : (started.toEpochMilli() - up.toEpochMilli()) + " ms after it");
    var now = ClusterFaults.plugin(d.nodePod());
    assertEquals(plugin.getContainerID(), now.getContainerID(), "the plugin not restarted");
    assertEquals(plugin.getRestartCount(), now.getRestartCount());
    assertEquals(
        readySince,
        readySince(d.nodePod(), "ContainersReady"),
        "the node pod's containers never went unready");
    Set<Long> proxies = d.proxies();
    assertTrue(proxies.contains(steadyProxy), "the writer's proxy untouched: " + proxies);
    assertTrue(proxies.containsAll(others), "no other proxy restarted: " + others + proxies);
    assertEquals(others.size() + 1, proxies.size(), "the canary's restarted once: " + proxies);
    assertFalse(proxies.contains(canaryProxy), "the canary's is a new process");
    long[] w = progress("steady.log");
    f.figure("API away: writer's writes / errors at the end", w[0] + " / " + w[1]);
    assertEquals(0, w[1], "the writer's errors");
    // the node lifecycle controller, back with the API server, finds the node's lease 60 s old and
    // marks it NotReady (its pods unready) until the kubelet's next heartbeat: the cluster's
    // doing, which the next test must not inherit
    d.admin
        .nodes()
        .withName("localhost")
        .waitUntilCondition(
            n ->
                n.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"))
                    && (n.getSpec().getTaints() == null
                        || n.getSpec().getTaints().stream()
                            .noneMatch(t -> t.getKey().startsWith("node.kubernetes.io/"))),
            120,
            TimeUnit.SECONDS);
    ClusterFaults.await(
        "the node pod Ready again",
        120,
        () -> {
          try {
            return readySince(d.nodePod(), "Ready") != null;
          } catch (RuntimeException | AssertionError e) {
            return false;
          }
        });
    f.figure("API back: -> node and node pod Ready", ms(t1) + " ms");
  }

  /**
   * The node plugin's pod deleted (as an operator or an eviction does) while two NodeStages wait:
   * one after its proxy started, in the NFS mount (the stand-in holds it); one before, in the mount
   * target's lookup (DescribeMountTargets, held by the EFS API). The DaemonSet's new pod adopts the
   * first proxy, and the kubelet's next NodeStages complete: each volume has one proxy on one port,
   * one staging mount and one publish mount.
   */
  @Test
  @Order(3)
  void thePluginPodDeletedMidStageBeforeAndAfterTheProxyStartedLeavesOneProxyAndMountEach()
      throws Exception {
    Map<String, String> pvs =
        Map.of(
            "after the proxy started",
            f.awaitBound("held-after", 120),
            "before the proxy started",
            f.awaitBound("held-before", 120));
    Set<Long> before = d.proxies();
    var node = d.nodePod();
    java.nio.file.Path hold = d.test.resolve("hold-mounts");
    try {
      java.nio.file.Files.writeString(hold, "");
      long t0 = System.nanoTime();
      long mounts = mountCalls();
      d.createPod("held-after", "held-after", "sleep 3600");
      ClusterFaults.await("the NodeStage held in its mount", 60, () -> mountCalls() > mounts);
      f.figure("deleted mid-stage after the proxy started: held after", ms(t0) + " ms");
      long lookups = d.efs.calls("DescribeMountTargets");
      d.efs.faults().latency("DescribeMountTargets", Duration.ofSeconds(90));
      long t1 = System.nanoTime();
      d.createPod("held-before", "held-before", "sleep 3600");
      ClusterFaults.await(
          "the NodeStage held in its lookup",
          60,
          () -> d.efs.calls("DescribeMountTargets") > lookups);
      f.figure("deleted mid-stage before the proxy started: held after", ms(t1) + " ms");
      long t2 = System.nanoTime();
      d.admin.pods().inNamespace(ClusterDriver.NS).withName(node.getMetadata().getName()).delete();
      d.admin
          .pods()
          .inNamespace(ClusterDriver.NS)
          .withName(node.getMetadata().getName())
          .waitUntilCondition(p -> p == null, 120, TimeUnit.SECONDS);
      // the plugin lets calls in flight finish for its shutdown's grace, then cancels them
      f.figure("deleted mid-stage: the old node pod gone after", ms(t2) + " ms");
      java.nio.file.Files.deleteIfExists(hold);
      d.efs.faults().latency("DescribeMountTargets", Duration.ZERO);
      for (String pod : List.of("held-after", "held-before")) {
        d.admin
            .pods()
            .inNamespace("default")
            .withName(pod)
            .waitUntilCondition(
                p -> p != null && "Running".equals(p.getStatus().getPhase()),
                180,
                TimeUnit.SECONDS);
      }
      f.figure("deleted mid-stage: both pods running after the delete", ms(t2) + " ms");
    } finally {
      java.nio.file.Files.deleteIfExists(hold);
      d.efs.faults().latency("DescribeMountTargets", Duration.ZERO);
    }
    Set<Long> after = d.proxies();
    assertTrue(after.containsAll(before), "every proxy of before adopted: " + before + after);
    assertEquals(before.size() + 2, after.size(), "one proxy per new volume: " + after);
    List<String> mounts = f.csiMounts();
    for (var e : pvs.entrySet()) {
      String when = e.getKey();
      String pv = e.getValue();
      // the kubelet stages a CSI volume at plugins/kubernetes.io/csi/<driver>/<sha256 of the
      // handle>/globalmount and publishes it at pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount
      String handle =
          d.admin.persistentVolumes().withName(pv).get().getSpec().getCsi().getVolumeHandle();
      String sha =
          java.util.HexFormat.of()
              .formatHex(
                  java.security.MessageDigest.getInstance("SHA-256")
                      .digest(handle.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      assertEquals(
          1,
          mounts.stream().filter(m -> m.contains("/" + sha + "/")).count(),
          when + ": staged once: " + mounts);
      assertEquals(
          1,
          mounts.stream().filter(m -> m.contains("/" + pv + "/")).count(),
          when + ": published once: " + mounts);
      Set<String> ports = new TreeSet<>();
      for (String line : java.nio.file.Files.readAllLines(d.test.resolve("nfs-mounts.log"))) {
        var m = java.util.regex.Pattern.compile("port=(\\d+)").matcher(line);
        if (line.contains("/" + sha + "/") && m.find()) {
          ports.add(m.group(1));
        }
      }
      f.figure("deleted mid-stage " + when + ": ports its mounts named", ports);
      assertEquals(1, ports.size(), when + ": one port for the volume: " + ports);
    }
  }

  private static long mountCalls() {
    try {
      return java.nio.file.Files.readAllLines(d.test.resolve("nfs-mounts.log")).size();
    } catch (java.io.IOException e) {
      return 0;
    }
  }

  private static int scrape(String url, String token) {
    try {
      return ClusterRbacIT.scrape(url, token).statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  /** When the pod's Ready condition last changed. */
  private static String readySince(io.fabric8.kubernetes.api.model.Pod pod, String condition) {
    return pod.getStatus().getConditions().stream()
        .filter(c -> c.getType().equals(condition) && c.getStatus().equals("True"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("not Ready: " + pod.getStatus()))
        .getLastTransitionTime();
  }

  /**
   * The outage's ProxyRestarted event (on any object: posted by this test's {@link PodEvents}, told
   * from any the plugin posts by its message) whose last time is at or after {@code since}.
   */
  private static List<io.fabric8.kubernetes.api.model.Event> restartedEvents(
      java.time.Instant since) {
    try {
      return d.admin.v1().events().inAnyNamespace().list().getItems().stream()
          .filter(e -> "ProxyRestarted".equals(e.getReason()))
          .filter(e -> e.getMessage() != null && e.getMessage().contains("during the outage"))
          .filter(e ->
              e.getLastTimestamp() != null
                  && !java.time.Instant.parse(e.getLastTimestamp())
                      .isBefore(since.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)))
          .toList();
    } catch (RuntimeException e) {
      return List.of();
    }
  }

  /**
   * NotifyRegistrationStatus calls with success the node's registrar has logged since it started.
   */
  private static long registrations(io.fabric8.kubernetes.api.model.Pod node) {
    try {
      return d.admin
          .pods()
          .inNamespace(ClusterDriver.NS)
          .withName(node.getMetadata().getName())
          .inContainer("csi-driver-registrar")
          .getLog()
          .lines()
          .filter(l -> l.contains("PluginRegistered:true"))
          .count();
    } catch (RuntimeException e) {
      return -1; // the API or the kubelet not answering yet
    }
  }

  private static long[] progress(String file) {
    try {
      return f.writerProgress(file);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static long ms(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }
}

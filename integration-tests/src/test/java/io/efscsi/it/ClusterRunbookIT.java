package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The commands docs/ gives an operator, read from the Markdown and run as printed (placeholders
 * filled, kubectl 1.31 and helm 3.17 against this 1.26 cluster) against the chart installed by
 * {@link ClusterDriver}: install.md's install again as an upgrade, the runbook's status, RBAC,
 * DaemonSet, metrics, events and pre-flight lines, and the handback pod up to the rollback. The
 * driver's removal and the other ways in are {@link ClusterRemovalIT}'s.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRunbookIT extends ClusterDriverFixture {

  /**
   * install.md's {@code helm upgrade --install} again, now with node metrics on: the release is
   * upgraded in place (a second revision), the node pod rolls (install.md's {@code rollout status}
   * lines wait for it) and a claim made afterwards is served: the volume the runbook's commands
   * look at.
   */
  @Test
  @Order(1)
  void theInstallCommandUpgradesTheReleaseInPlace() throws Exception {
    d.helm.install(ClusterDriverSupport.values(d, true, false));
    // install.md's two rollout lines: each waits for its workload's roll
    for (DocCommands.Line l :
        DocCommands.block("install.md", "kubectl -n kube-system rollout status").subList(1, 3)) {
      assertTrue(l.command().startsWith("kubectl -n kube-system rollout status "), l.command());
      var rolled = d.ok(l.command());
      assertTrue(rolled.output().contains("successfully rolled out"), rolled.toString());
    }
    var ds = d.admin.apps().daemonSets().inNamespace(ClusterDriver.NS).withName("efs-csi-node");
    ds.waitUntilCondition(
        x ->
            x.getStatus().getObservedGeneration() != null
                && x.getStatus().getObservedGeneration() >= x.getMetadata().getGeneration()
                && Integer.valueOf(1).equals(x.getStatus().getUpdatedNumberScheduled())
                && Integer.valueOf(1).equals(x.getStatus().getNumberReady())
                && x.getStatus().getNumberUnavailable() == null,
        240,
        TimeUnit.SECONDS);
    String args =
        String.join(
            " ", ds.get().getSpec().getTemplate().getSpec().getContainers().getFirst().getArgs());
    assertTrue(args.contains("--metrics-auth=kubernetes"), args);
    var history = d.ok("helm -n kube-system history " + ClusterDriver.RELEASE);
    assertTrue(history.output().lines().count() >= 3, "install and upgrades: " + history);
    d.admin.resource(ClusterDriverSupport.claim("runbook", Map.of(), "1Gi")).create();
    d.runPod("runbook", "runbook", "echo runbook > /data/runbook && sleep 3600");
    d.awaitLog("runbook", "");
    assertEquals("runbook\n", d.execIn("runbook", "/bin/cat", "/data/runbook"));
  }

  /**
   * troubleshooting.md's status line, through kubectl exec: no --state-dir, though the suite's
   * state dir is not the default one (the chart tells the container where it is).
   */
  @Test
  @Order(2)
  void statusAnswersInsideThePodAsTheRunbookSays() throws Exception {
    String status =
        DocCommands.inline("troubleshooting.md", "kubectl -n kube-system exec <efs-csi-node-")
            .replaceAll("<[^>]+>", d.nodePod().getMetadata().getName());
    var r = d.ok(status);
    assertTrue(r.output().contains(d.fsId), r.toString());
    // "--json gives the same for scripts"
    var json = d.ok(status + " --json");
    @SuppressWarnings("unchecked")
    var proxies =
        (List<Map<String, Object>>)
            new com.fasterxml.jackson.databind.ObjectMapper()
                .readValue(json.output(), Map.class)
                .get("proxies");
    assertTrue(
        proxies.stream()
            .anyMatch(p ->
                p.get("volume").toString().startsWith(d.fsId)
                    && Boolean.TRUE.equals(p.get("running"))),
        json.toString());
  }

  /**
   * security.md's "Verifying on a cluster" block answers what its comments say (node metrics are
   * on), and migration.md's DaemonSet checks show the selector and the read-only efs-utils mounts
   * they promise.
   */
  @Test
  @Order(3)
  void theRunbooksKubectlLinesAnswerAsTheDocsSay() throws Exception {
    StringBuilder vars = new StringBuilder();
    int ran = 0;
    for (DocCommands.Line l : DocCommands.block("security.md", "kubectl auth can-i")) {
      if (l.command().matches("[A-Z_]+=\\S+")) {
        vars.append(l.command()).append("; ");
        continue;
      }
      var r = d.run(vars + l.command());
      String what = l.command() + " -> " + r;
      ran++;
      if (l.comment().equals("no")) {
        assertEquals("no", r.output().strip(), what);
      } else if (l.comment().startsWith("yes only with node.metrics.enabled")) {
        assertEquals("yes", r.output().strip(), what);
      } else if (l.command().startsWith("ss ")) {
        assertEquals(0, r.exit(), what);
        assertTrue(r.output().matches("(?s).*127\\.0\\.0\\.1\\]?:20\\d\\d\\d .*java.*"), what);
        assertTrue(r.output().matches("(?s).*:9809 .*"), what);
        assertTrue(r.output().matches("(?s).*:3302 .*"), "metrics are on: " + what);
      } else {
        assertEquals(0, r.exit(), what);
        if (l.command().contains("clusterrolebindings")) {
          assertTrue(r.output().contains("efs-csi-metrics-auth-delegator"), what);
        }
        if (l.command().contains("hostPID")) {
          assertTrue(r.output().startsWith("true true"), what);
          assertTrue(r.output().contains("efs-plugin: {\"privileged\":true"), what);
        }
      }
    }
    assertEquals(8, ran, "the block's commands");
    var selector =
        d.run(DocCommands.block("migration.md", "spec.selector.matchLabels").getFirst().command());
    assertEquals(
        "{\"app\":\"efs-csi-node\",\"app.kubernetes.io/instance\":\""
            + ClusterDriver.RELEASE
            + "\",\"app.kubernetes.io/name\":\"aws-efs-csi-driver\"}",
        selector.output().strip());
    var r =
        d.ok(
            DocCommands.inline(
                "migration.md", "kubectl -n kube-system get ds efs-csi-node -o yaml"));
    for (String path : List.of("/var/amazon/efs", "/etc/amazon/efs-legacy")) {
      assertTrue(r.output().contains("mountPath: " + path), path + " in " + r.output());
    }
    assertTrue(r.output().contains("readOnly: true"), r.output());
  }

  /**
   * metrics.md: the fingerprint the plugin logs is the served certificate's, and the token of a
   * subject of monitoring.metricsReader reads /metrics with the docs' curl line.
   */
  @Test
  @Order(4)
  void theMetricsEndpointAnswersTheDocsCurlWithTheLoggedCertificate() throws Exception {
    String logs =
        DocCommands.inline("metrics.md", "kubectl logs <pod> -c efs-plugin | grep fingerprint")
            .replace(
                "kubectl logs <pod>",
                "kubectl -n kube-system logs " + d.nodePod().getMetadata().getName());
    var logged = d.ok(logs);
    String fingerprint = served("127.0.0.1", 3302);
    assertTrue(
        logged.output().contains("SHA-256 fingerprint " + fingerprint),
        fingerprint + " in " + logged);
    d.admin
        .serviceAccounts()
        .inNamespace("default")
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName("scraper").endMetadata().build())
        .serverSideApply();
    String curl =
        DocCommands.script("metrics.md", "kubectl create token")
            // the suite's monitoring.metricsReader subject, and this node
            .replace("prometheus-k8s -n monitoring", "scraper -n default")
            .replace("<node-ip>", "127.0.0.1");
    // as an operator's shell runs it: head closing the pipe early is no failure
    var r = d.ok("set +o pipefail; " + curl);
    assertTrue(r.output().lines().count() == 10 && r.output().contains("efs_csi_"), r.toString());
  }

  /** The SHA-256 fingerprint of the certificate served at host:port, as openssl prints it. */
  static String served(String host, int port) throws Exception {
    X509Certificate[] chain = new X509Certificate[1];
    TrustManager keep =
        new X509TrustManager() {
          @Override
          public void checkClientTrusted(X509Certificate[] c, String a) {}

          @Override
          public void checkServerTrusted(X509Certificate[] c, String a) {
            chain[0] = c[0];
          }

          @Override
          public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
          }
        };
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, new TrustManager[] {keep}, null);
    try (var s = (SSLSocket) tls.getSocketFactory().createSocket(host, port)) {
      s.startHandshake();
    }
    byte[] sha = MessageDigest.getInstance("SHA-256").digest(chain[0].getEncoded());
    return HexFormat.ofDelimiter(":").withUpperCase().formatHex(sha);
  }

  /**
   * A stage that fails leaves its reason where metrics.md says: a {@code StageFailed} event on the
   * Node naming the volume handle (the node reads no pods; podInfoOnMount is off), which the docs'
   * {@code kubectl get events} and {@code kubectl describe node} lines show.
   */
  @Test
  @Order(7)
  void aFailedStageIsAStageFailedEventOnTheNodeAsTheDocsShowIt() throws Exception {
    String handle = d.fsId + ":/fake-mount-failure";
    d.staticClaim("failing", handle);
    d.createPod("failing", "failing-claim", "exec sleep 3600");
    List<String> lines =
        DocCommands.block("metrics.md", "kubectl describe node").stream()
            .map(l -> l.command().replace("<node>", "localhost"))
            .filter(c -> !c.contains("<pod>"))
            .toList();
    assertEquals(2, lines.size(), "describe node, get events: " + lines);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    String events = "";
    while (!events.contains(handle) && System.nanoTime() < end) {
      events = d.ok(lines.get(1)).output();
      Thread.sleep(500);
    }
    assertTrue(
        events
            .lines()
            .anyMatch(l ->
                l.contains("Warning")
                    && l.contains("StageFailed")
                    && l.contains("node/localhost")
                    && l.contains(handle)),
        events);
    String described = d.ok(lines.get(0)).output();
    assertTrue(
        described.lines().anyMatch(l -> l.contains("StageFailed") && l.contains(handle)),
        described);
    var found =
        d.admin.v1().events().inNamespace("default").list().getItems().stream()
            .filter(e -> "StageFailed".equals(e.getReason()))
            .filter(e -> e.getMessage().contains(handle))
            .findFirst()
            .orElseThrow();
    assertEquals("efs.csi.aws.com", found.getReportingComponent());
    d.deletePod("failing", 0);
    d.admin.persistentVolumeClaims().inNamespace("default").withName("failing-claim").delete();
    d.admin.persistentVolumes().withName("failing-pv").delete();
  }

  /**
   * migration.md's {@code efs-csi preflight node} in a {@code kubectl debug node/…} pod of the
   * image: the host's root at /host, its pid namespace; this node holds no Go-driver mount.
   */
  @Test
  @Order(6)
  void preflightNodeRunsInADebugPodAsPrinted() throws Exception {
    String debug =
        DocCommands.block("migration.md", "efs-csi preflight node")
            .getFirst()
            .command()
            .replace("<node>", "localhost");
    var r = DocCommands.run(debug, d.kubeconfig(), Map.of("IMAGE", "efs-csi-test/efs-csi:it"));
    assertEquals(0, r.exit(), r.toString());
    String out = d.debugOutput(r);
    assertTrue(out.contains("KIND") && out.contains("nothing would break"), out);
  }

  /**
   * migration.md's cluster pre-flight from the image, with the kubeconfig its block makes (the
   * lines marked "EKS only" need the aws CLI and are left out: the suite's admin kubeconfig has
   * client certificates, which --flatten inlines). Here the API server listens on a loopback
   * address, so the container joins the host's network ({@code --network host}, the one change to
   * the printed lines; an EKS endpoint needs none).
   */
  @Test
  @Order(6)
  void preflightRunsFromTheImageWithTheKubeconfigItsBlockMakes() throws Exception {
    Path dir = Files.createDirectories(d.work.resolve("preflight"));
    String script =
        DocCommands.script("migration.md", "preflight --kubeconfig /kube/config")
            .lines()
            .filter(l -> !l.endsWith("# EKS only"))
            .map(l -> l.replace("docker run --rm ", "docker run --rm --network host "))
            .collect(java.util.stream.Collectors.joining("\n"));
    assertTrue(script.contains("--flatten") && script.contains("--network host"), script);
    var r =
        DocCommands.run(
            "cd " + dir + "\n" + script,
            d.kubeconfig(),
            Map.of("IMAGE", "efs-csi-test/efs-csi:it", "AWS_REGION", "us-east-1"));
    assertEquals(0, r.exit(), script + " -> " + r);
    assertTrue(
        r.output().lines().anyMatch(l -> l.matches("StorageClass\\s+efs-sc\\s+ok\\s.*")),
        r.toString());
    assertTrue(r.output().contains("nothing would break"), r.toString());
  }

  /**
   * migration.md's rollback block up to the rollback itself (no Go driver chart reaches this
   * cluster): the dry run in our node pod, then one handback pod per node rendered from the chart
   * and applied with kubectl. The stand-in NFS mount is a bind mount, which names no port, so the
   * plan finds no mount on the runbook proxy's port: idle, stopped only once our plugin is gone
   * (the kernel VM's scenario 13 hands real mounts back). With our node plugin still running (no
   * {@code helm rollback}), the pod writes nothing, waits for our supervisor's lock, gives up at
   * its wait (5 s here, 30 min by default), says so in the log the docs follow, exits 1, and is
   * deleted with the docs' command; our proxy is left serving.
   */
  @Test
  @Order(5)
  void theHandbackPodWaitsForTheRollbackAndUndoesWithoutIt() throws Exception {
    var before = d.proxies();
    assertEquals(1, before.size(), "the runbook claim's proxy: " + before);
    String dryRun =
        DocCommands.script("migration.md", "efs-csi handback --go-driver=v3.4.1 --dry-run")
            .replaceAll("<efs-csi-node pod on the node>", d.nodePod().getMetadata().getName());
    var plan = d.ok(dryRun);
    assertTrue(plan.output().contains("dry run: nothing written"), plan.toString());
    assertTrue(plan.output().contains("1 idle"), plan.toString());

    String block = DocCommands.script("migration.md", "templates/handback-pod.yaml");
    List<String> steps = block.lines().toList();
    int rollback = indexOf(steps, "helm rollback ");
    String apply =
        String.join("\n", steps.subList(0, rollback))
            .replace("my-values.yaml", d.helm.valuesFile().toString())
            .replace(
                "--set handback.goDriver=\"$GO\"",
                "--set handback.goDriver=\"$GO\" --set handback.wait=5s");
    assertTrue(apply.contains("handback.wait=5s"), apply);
    var applied = d.ok(apply);
    assertTrue(
        applied.output().contains("pod/efs-csi-handback-localhost created"), applied.toString());
    var pod = d.admin.pods().inNamespace(ClusterDriver.NS).withName("efs-csi-handback-localhost");
    pod.waitUntilCondition(
        p -> p != null && !"Pending".equals(p.getStatus().getPhase()), 120, TimeUnit.SECONDS);
    String follow = steps.get(indexOf(steps, "logs -f")).replace("<node>", "localhost");
    var log = d.ok(follow);
    for (String said :
        List.of(
            "idle",
            "waiting up to 5 s for our node plugin to stop",
            "our node plugin still runs",
            "undoing")) {
      assertTrue(log.output().contains(said), said + " in " + log);
    }
    var done =
        pod.waitUntilCondition(
            p -> "Failed".equals(p.getStatus().getPhase()), 60, TimeUnit.SECONDS);
    assertEquals(
        1,
        done.getStatus()
            .getContainerStatuses()
            .getFirst()
            .getState()
            .getTerminated()
            .getExitCode());
    assertNotNull(done.getSpec().getAutomountServiceAccountToken());
    assertFalse(done.getSpec().getAutomountServiceAccountToken(), "no API token");
    var deleted = d.ok(steps.get(indexOf(steps, "delete pod -l")));
    assertTrue(
        deleted.output().contains("pod \"efs-csi-handback-localhost\" deleted"),
        deleted.toString());
    assertEquals(before, d.proxies(), "our proxy serves on");
    assertEquals("runbook\n", d.execIn("runbook", "/bin/cat", "/data/runbook"));
  }

  static int indexOf(List<String> lines, String part) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(part)) {
        return i;
      }
    }
    throw new AssertionError("no line with " + part + " in " + lines);
  }
}

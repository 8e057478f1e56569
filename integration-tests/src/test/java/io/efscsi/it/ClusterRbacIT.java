package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.it.cluster.ControlPlane;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributesBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The chart's ServiceAccounts and RBAC as a real API server (v1.26, Node and RBAC authorisation)
 * authorises them: what the node and the controller may and may not do, asked through
 * SubjectAccessReviews and tried with each ServiceAccount's own token. The fabric8 mock server
 * authorises nothing, so this is where the least-privilege figures are measured.
 */
class ClusterRbacIT {

  static final String NS = "kube-system";
  static final String NODE_SA = "system:serviceaccount:kube-system:efs-csi-node-sa";
  static final String CONTROLLER_SA = "system:serviceaccount:kube-system:efs-csi-controller-sa";

  static ControlPlane cluster;
  static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    cluster = ControlPlane.start();
    admin = cluster.admin();
    install(HelmChartTest.render("defaults"));
  }

  /** The chart with authenticated node metrics and a scraper's ServiceAccount named as reader. */
  static final List<HasMetadata> METRICS_ON =
      HelmChartTest.render(
          "defaults",
          Map.of(
              "node.metrics.enabled",
              true,
              "monitoring.metricsReader.subjects[0].kind",
              "ServiceAccount",
              "monitoring.metricsReader.subjects[0].name",
              "scraper",
              "monitoring.metricsReader.subjects[0].namespace",
              NS));

  /**
   * The packaged node plugin with {@code --metrics-auth=kubernetes}, asking this API server with
   * the node ServiceAccount's token: no token 401, a token without the reader role 403 (also the
   * node's own), the scraper's token 200 with the metrics; and the reviews are cached (a second
   * scrape asks nothing).
   */
  @Test
  void theNodeMetricsAnswerOnlyAnAuthorisedScraper() throws Exception {
    for (String sa : List.of("scraper", "stranger")) {
      admin
          .serviceAccounts()
          .inNamespace(NS)
          .resource(
              new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName(sa)
                  .endMetadata()
                  .build())
          .createOr(x -> x.update());
    }
    install(METRICS_ON);
    String nodeToken = token("efs-csi-node-sa");
    java.nio.file.Path tmp = java.nio.file.Files.createTempDirectory("efscsi-metrics-auth");
    PackagedDriver node = null;
    try {
      Map<String, String> env =
          Map.of(
              "KUBECONFIG", cluster.kubeconfig("node-sa", nodeToken).toString(),
              "KUBERNETES_SERVICE_HOST", cluster.apiHost(),
              "KUBERNETES_SERVICE_PORT", "443");
      node =
          NodePlugins.startPlugin(
              tmp,
              "metrics-auth",
              SupervisorFixture.freeRange(2),
              1,
              env,
              List.of(),
              List.of("--proxy-cgroup=none", "--metrics-auth=kubernetes"));
      var m =
          java.util.regex.Pattern.compile("health and metrics on https://127\\.0\\.0\\.1:(\\d+)")
              .matcher(node.logText());
      assertTrue(m.find(), "no https endpoint in the log:\n" + node.logText());
      String url = "https://127.0.0.1:" + m.group(1) + "/metrics";
      assertEquals(401, scrape(url, null).statusCode());
      assertEquals(401, scrape(url, "not-a-token").statusCode());
      assertEquals(403, scrape(url, token("stranger")).statusCode());
      assertEquals(403, scrape(url, nodeToken).statusCode(), "the node's own token reads nothing");
      String scraper = token("scraper");
      var ok = scrape(url, scraper);
      assertEquals(200, ok.statusCode(), ok.body());
      assertTrue(ok.body().contains("efs_csi_http_auth_reviews_total"), ok.body());
      double before = reviews(ok.body());
      var again = scrape(url, scraper);
      assertEquals(200, again.statusCode());
      assertEquals(before, reviews(again.body()), "a second scrape within the TTL asks nothing");
      // what a scrape every 15 s costs: the reviews' TTLs bound it (docs/metrics.md)
      System.err.printf(
          "metrics auth: %.0f reviews for 6 requests (4 refused, 2 scrapes)%n", before);
    } finally {
      NodePlugins.cleanUp(node, tmp);
      for (String b : List.of("efs-csi-metrics-auth-delegator", "efs-csi-metrics-reader")) {
        admin.rbac().clusterRoleBindings().withName(b).delete();
      }
    }
  }

  /** The sum of efs_csi_http_auth_reviews_total over every kind and result. */
  static double reviews(String metrics) {
    return metrics
        .lines()
        .filter(l -> l.startsWith("efs_csi_http_auth_reviews_total{"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /** A GET of {@code url} over TLS without checking the plugin's self-signed certificate. */
  static java.net.http.HttpResponse<String> scrape(String url, String token) throws Exception {
    javax.net.ssl.SSLContext trustAll = javax.net.ssl.SSLContext.getInstance("TLS");
    trustAll.init(
        null,
        new javax.net.ssl.TrustManager[] {
          new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a) {}

            @Override
            public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a) {}

            @Override
            public java.security.cert.X509Certificate[] getAcceptedIssuers() {
              return new java.security.cert.X509Certificate[0];
            }
          }
        },
        null);
    var params = new javax.net.ssl.SSLParameters();
    params.setEndpointIdentificationAlgorithm(null);
    try (var http =
        java.net.http.HttpClient.newBuilder().sslContext(trustAll).sslParameters(params).build()) {
      var req = java.net.http.HttpRequest.newBuilder(java.net.URI.create(url));
      if (token != null) {
        req.header("Authorization", "Bearer " + token);
      }
      return http.send(req.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    }
  }

  @AfterAll
  static void stop() {
    if (admin != null) {
      admin.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The chart's identities and their RBAC, applied as helm would (the workloads are not). */
  static void install(List<HasMetadata> objects) {
    for (HasMetadata o : objects) {
      switch (o.getKind()) {
        case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding" ->
            admin.resource(o).inNamespace(NS).createOr(x -> x.update());
        default -> {}
      }
    }
  }

  @Test
  void theNodeMayReadNodesAndTheCsiNodeAndPostEventsOnly() {
    List<String> denied = new ArrayList<>();
    List<String> allowed = new ArrayList<>();
    for (String[] a : ACCESS) {
      (review(NODE_SA, a) ? allowed : denied).add(String.join(" ", a));
    }
    assertEquals(
        List.of(
            "get  nodes",
            "list  nodes",
            "watch  nodes",
            "patch  nodes",
            "get storage.k8s.io csinodes",
            "create  events",
            "patch  events"),
        allowed,
        "what the node ServiceAccount may do");
    assertTrue(
        denied.containsAll(
            List.of(
                "list  pods",
                "get  pods",
                "list  persistentvolumes",
                "get  persistentvolumes",
                "list  secrets",
                "get  secrets",
                "update  events")),
        "" + denied);
  }

  @Test
  void theNodeTokenGets403ForPodsVolumesAndSecrets() {
    try (KubernetesClient node = cluster.client(token("efs-csi-node-sa"))) {
      forbidden(() -> node.pods().inAnyNamespace().list());
      forbidden(() -> node.pods().inNamespace("default").list());
      forbidden(() -> node.persistentVolumes().list());
      forbidden(() -> node.persistentVolumes().withName("pv-1").get());
      forbidden(() -> node.secrets().inAnyNamespace().list());
      forbidden(() -> node.secrets().inNamespace(NS).withName("x-account").get());
      forbidden(() -> node.configMaps().inAnyNamespace().list());
      // what it needs works
      assertTrue(node.nodes().list().getItems().isEmpty());
      assertEquals(null, node.storage().v1().csiNodes().withName("ip-10-0-0-1").get());
      var posted =
          node.v1()
              .events()
              .inNamespace("default")
              .resource(
                  new EventBuilder()
                      .withNewMetadata()
                      .withName("n.1")
                      .endMetadata()
                      .withNewInvolvedObject()
                      .withKind("Node")
                      .withName("ip-10-0-0-1")
                      .endInvolvedObject()
                      .withReason("Test")
                      .withMessage("m")
                      .build())
              .create();
      assertEquals("Test", posted.getReason());
    }
  }

  @Test
  void disableMutationTakesTheNodePatchAway() {
    List<HasMetadata> prod =
        HelmChartTest.render("defaults", Map.of("node.serviceAccount.disableMutation", true));
    install(prod);
    try {
      assertFalse(review(NODE_SA, new String[] {"patch", "", "nodes"}));
      assertTrue(review(NODE_SA, new String[] {"get", "", "nodes"}));
    } finally {
      install(HelmChartTest.render("defaults"));
    }
    assertTrue(review(NODE_SA, new String[] {"patch", "", "nodes"}));
  }

  @Test
  void theControllerMayProvisionButReadsOneSecretOnly() {
    for (String[] a :
        List.of(
            new String[] {"create", "", "persistentvolumes"},
            new String[] {"delete", "", "persistentvolumes"},
            new String[] {"update", "", "persistentvolumeclaims"},
            new String[] {"list", "storage.k8s.io", "storageclasses"},
            new String[] {"create", "coordination.k8s.io", "leases"},
            new String[] {"create", "", "events"},
            // the resizer writes a grown claim's size there
            new String[] {"patch", "", "persistentvolumeclaims/status"})) {
      assertTrue(review(CONTROLLER_SA, a), String.join(" ", a));
    }
    for (String[] a :
        List.of(
            new String[] {"list", "", "secrets"},
            new String[] {"list", "", "pods"},
            new String[] {"delete", "", "persistentvolumeclaims"},
            new String[] {"update", "", "persistentvolumeclaims/status"},
            new String[] {"patch", "", "nodes"},
            new String[] {"create", "", "pods"})) {
      assertFalse(review(CONTROLLER_SA, a), String.join(" ", a));
    }
    assertTrue(reviewNamed(CONTROLLER_SA, "get", "secrets", "x-account"));
    assertFalse(reviewNamed(CONTROLLER_SA, "get", "secrets", "aws-credentials"));
  }

  /** verb, API group, resource: every question the node test asks, in the order it lists them. */
  static final List<String[]> ACCESS =
      List.of(
          new String[] {"get", "", "nodes"},
          new String[] {"list", "", "nodes"},
          new String[] {"watch", "", "nodes"},
          new String[] {"patch", "", "nodes"},
          new String[] {"update", "", "nodes"},
          new String[] {"delete", "", "nodes"},
          new String[] {"get", "storage.k8s.io", "csinodes"},
          new String[] {"list", "storage.k8s.io", "csinodes"},
          new String[] {"create", "", "events"},
          new String[] {"patch", "", "events"},
          new String[] {"update", "", "events"},
          new String[] {"list", "", "events"},
          new String[] {"get", "", "pods"},
          new String[] {"list", "", "pods"},
          new String[] {"get", "", "persistentvolumes"},
          new String[] {"list", "", "persistentvolumes"},
          new String[] {"get", "", "persistentvolumeclaims"},
          new String[] {"get", "", "secrets"},
          new String[] {"list", "", "secrets"},
          new String[] {"get", "", "configmaps"},
          new String[] {"create", "authentication.k8s.io", "tokenreviews"},
          new String[] {"create", "authorization.k8s.io", "subjectaccessreviews"});

  static boolean review(String user, String[] access) {
    return ask(user, access[0], access[1], access[2], null);
  }

  static boolean reviewNamed(String user, String verb, String resource, String name) {
    return ask(user, verb, "", resource, name);
  }

  private static boolean ask(String user, String verb, String group, String resource, String name) {
    SubjectAccessReview r =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser(user)
            .withGroups(
                "system:serviceaccounts", "system:serviceaccounts:" + NS, "system:authenticated")
            .withResourceAttributes(
                new ResourceAttributesBuilder()
                    .withVerb(verb)
                    .withGroup(group)
                    // "persistentvolumeclaims/status": a resource and its subresource
                    .withResource(resource.split("/")[0])
                    .withSubresource(resource.contains("/") ? resource.split("/", 2)[1] : null)
                    .withName(name)
                    .withNamespace(
                        resource.equals("events") || resource.equals("secrets") ? NS : null)
                    .build())
            .endSpec()
            .build();
    return admin.resource(r).create().getStatus().getAllowed();
  }

  /** A token of the ServiceAccount {@code name} in kube-system (TokenRequest, 10 minutes). */
  static String token(String name) {
    return admin
        .serviceAccounts()
        .inNamespace(NS)
        .withName(name)
        .tokenRequest(
            new TokenRequestBuilder().withNewSpec().withExpirationSeconds(600L).endSpec().build())
        .getStatus()
        .getToken();
  }

  static void forbidden(Executable call) {
    KubernetesClientException e = assertThrows(KubernetesClientException.class, call);
    assertEquals(403, e.getCode(), e.getMessage());
  }
}

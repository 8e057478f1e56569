package io.efscsi.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.efscsi.common.http.auth.AccessReviewException;
import io.efscsi.common.http.auth.UserInfo;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The requests the adapter sends to a (mock) API server, and how it reads the answers. */
@EnableKubernetesMockClient
class KubernetesAccessReviewerTest {

  static final String TOKENREVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews";
  static final String SARS = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  static final String TOKEN = "eyJhbGciOiJSUzI1NiJ9.secret-part.sig";
  static final ObjectMapper JSON = new ObjectMapper();

  KubernetesMockServer server;
  KubernetesClient client;

  private KubernetesAccessReviewer reviewer() {
    return new KubernetesAccessReviewer(() -> client);
  }

  private JsonNode lastBody(String path) throws Exception {
    RecordedRequest r = server.takeRequest();
    assertEquals("POST", r.getMethod());
    assertEquals(path, r.getPath());
    return JSON.readTree(r.getUtf8Body());
  }

  @Test
  void anAuthenticatedTokenGivesItsUser() throws Exception {
    server
        .expect()
        .post()
        .withPath(TOKENREVIEWS)
        .andReturn(
            201,
            new TokenReviewBuilder()
                .withNewStatus()
                .withAuthenticated(true)
                .withNewUser()
                .withUsername("system:serviceaccount:monitoring:prometheus")
                .withUid("5f0c")
                .withGroups("system:serviceaccounts", "system:authenticated")
                .withExtra(Map.of("authentication.kubernetes.io/pod-name", List.of("prom-0")))
                .endUser()
                .endStatus()
                .build())
        .once();
    Optional<UserInfo> user = reviewer().authenticate(TOKEN);
    assertEquals(
        Optional.of(
            new UserInfo(
                "system:serviceaccount:monitoring:prometheus",
                "5f0c",
                List.of("system:serviceaccounts", "system:authenticated"),
                Map.of("authentication.kubernetes.io/pod-name", List.of("prom-0")))),
        user);
    JsonNode body = lastBody(TOKENREVIEWS);
    assertEquals("authentication.k8s.io/v1", body.path("apiVersion").asText());
    assertEquals("TokenReview", body.path("kind").asText());
    assertEquals(TOKEN, body.path("spec").path("token").asText());
  }

  @Test
  void aRejectedTokenIsEmpty() throws Exception {
    server
        .expect()
        .post()
        .withPath(TOKENREVIEWS)
        .andReturn(
            201,
            new TokenReviewBuilder()
                .withNewStatus()
                .withAuthenticated(false)
                .withError("invalid bearer token")
                .endStatus()
                .build())
        .once();
    assertEquals(Optional.empty(), reviewer().authenticate("not-a-token"));
  }

  @Test
  void theAccessReviewAsksForTheUserOnTheNonResourceUrl() throws Exception {
    server
        .expect()
        .post()
        .withPath(SARS)
        .andReturn(
            201,
            new SubjectAccessReviewBuilder().withNewStatus().withAllowed(true).endStatus().build())
        .once();
    server
        .expect()
        .post()
        .withPath(SARS)
        .andReturn(
            201,
            new SubjectAccessReviewBuilder()
                .withNewStatus()
                .withAllowed(false)
                .withReason("no RBAC policy matched")
                .endStatus()
                .build())
        .once();
    UserInfo user =
        new UserInfo(
            "system:serviceaccount:monitoring:prometheus",
            "5f0c",
            List.of("system:serviceaccounts"),
            Map.of("authentication.kubernetes.io/pod-name", List.of("prom-0")));
    KubernetesAccessReviewer reviewer = reviewer();
    assertTrue(reviewer.allowed(user, "/metrics", "get"));
    JsonNode spec = lastBody(SARS).path("spec");
    assertEquals("system:serviceaccount:monitoring:prometheus", spec.path("user").asText());
    assertEquals("5f0c", spec.path("uid").asText());
    assertEquals("system:serviceaccounts", spec.path("groups").path(0).asText());
    assertEquals(
        "prom-0",
        spec.path("extra").path("authentication.kubernetes.io/pod-name").path(0).asText());
    assertEquals("/metrics", spec.path("nonResourceAttributes").path("path").asText());
    assertEquals("get", spec.path("nonResourceAttributes").path("verb").asText());
    assertTrue(spec.path("resourceAttributes").isMissingNode());
    assertFalse(reviewer.allowed(user, "/metrics", "get"));
  }

  @Test
  void aRefusedReviewIsAnErrorNamingTheCodeAndMessageButNotTheToken() {
    server
        .expect()
        .post()
        .withPath(TOKENREVIEWS)
        .andReturn(
            403,
            new StatusBuilder()
                .withCode(403)
                .withReason("Forbidden")
                .withMessage(
                    "tokenreviews.authentication.k8s.io is forbidden: User"
                        + " \"system:serviceaccount:kube-system:efs-csi-node-sa\" cannot create"
                        + " resource \"tokenreviews\"")
                .build())
        .once();
    AccessReviewException e =
        assertThrows(AccessReviewException.class, () -> reviewer().authenticate(TOKEN));
    assertTrue(e.getMessage().startsWith("TokenReview failed: HTTP 403: "), e.getMessage());
    assertTrue(e.getMessage().contains("efs-csi-node-sa"), e.getMessage());
    assertFalse(e.getMessage().contains(TOKEN));
  }

  @Test
  void outsideAClusterEveryReviewFailsWithTheReason() {
    KubernetesAccessReviewer outside = KubernetesAccessReviewer.inCluster(Map.of());
    AccessReviewException e =
        assertThrows(AccessReviewException.class, () -> outside.authenticate(TOKEN));
    assertTrue(e.getMessage().contains("KUBERNETES_SERVICE_HOST is not set"), e.getMessage());
    outside.close();
  }
}

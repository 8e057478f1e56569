package io.efscsi.launcher;

import io.efscsi.common.http.auth.AccessReviewException;
import io.efscsi.common.http.auth.AccessReviewer;
import io.efscsi.common.http.auth.UserInfo;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link AccessReviewer} on the API server: a TokenReview (authentication.k8s.io/v1) per token and
 * a SubjectAccessReview (authorization.k8s.io/v1) with non-resource attributes per question, as
 * kube components' delegated authentication and authorization do. The plugin's service account
 * needs {@code create} on both ({@code system:auth-delegator}). The client is built on first use,
 * in the cluster only, as the plugins build theirs.
 */
final class KubernetesAccessReviewer implements AccessReviewer, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KubernetesAccessReviewer.class);

  private final Supplier<KubernetesClient> clients;
  private KubernetesClient client;

  KubernetesAccessReviewer(Supplier<KubernetesClient> clients) {
    this.clients = clients;
  }

  /** The plugins' way: the in-cluster configuration, and only inside a cluster. */
  static KubernetesAccessReviewer inCluster(Map<String, String> env) {
    return new KubernetesAccessReviewer(() -> {
      if (!env.containsKey("KUBERNETES_SERVICE_HOST")) {
        throw new KubernetesClientException(
            "not running inside a Kubernetes cluster (KUBERNETES_SERVICE_HOST is not set)");
      }
      return new KubernetesClientBuilder().build();
    });
  }

  @Override
  public Optional<UserInfo> authenticate(String token) throws AccessReviewException {
    TokenReview review = new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build();
    TokenReview answer;
    try {
      answer = client().authentication().v1().tokenReviews().create(review);
    } catch (RuntimeException e) {
      throw failure("TokenReview", e, token);
    }
    TokenReviewStatus status = answer.getStatus();
    if (status == null
        || !Boolean.TRUE.equals(status.getAuthenticated())
        || status.getUser() == null
        || status.getUser().getUsername() == null) {
      log.debug(
          "TokenReview: not authenticated{}",
          status == null || status.getError() == null
              ? ""
              : ": " + scrub(status.getError(), token));
      return Optional.empty();
    }
    var user = status.getUser();
    return Optional.of(
        new UserInfo(user.getUsername(), user.getUid(), user.getGroups(), user.getExtra()));
  }

  @Override
  public boolean allowed(UserInfo user, String path, String verb) throws AccessReviewException {
    SubjectAccessReview review =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser(user.username())
            .withUid(user.uid().isEmpty() ? null : user.uid())
            .withGroups(user.groups())
            .withExtra(user.extra())
            .withNewNonResourceAttributes()
            .withPath(path)
            .withVerb(verb)
            .endNonResourceAttributes()
            .endSpec()
            .build();
    SubjectAccessReview answer;
    try {
      answer = client().authorization().v1().subjectAccessReview().create(review);
    } catch (RuntimeException e) {
      throw failure("SubjectAccessReview", e, null);
    }
    boolean allowed =
        answer.getStatus() != null && Boolean.TRUE.equals(answer.getStatus().getAllowed());
    if (!allowed && answer.getStatus() != null) {
      log.debug(
          "SubjectAccessReview: {} may not {} {}: {}",
          user.username(),
          verb,
          path,
          Optional.ofNullable(answer.getStatus().getReason()).orElse("no reason given"));
    }
    return allowed;
  }

  private synchronized KubernetesClient client() {
    if (client == null) {
      client = clients.get();
    }
    return client;
  }

  /**
   * The review's failure in our words: the HTTP code and the API server's message (which names our
   * service account when RBAC refuses it), never the request, which holds the token.
   */
  private static AccessReviewException failure(String kind, RuntimeException e, String token) {
    String why;
    if (e instanceof KubernetesClientException k && k.getCode() > 0) {
      String message = k.getStatus() == null ? null : k.getStatus().getMessage();
      why = "HTTP " + k.getCode() + (message == null ? "" : ": " + message);
    } else {
      why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      if (root != e) {
        why += " (" + root + ")";
      }
    }
    return new AccessReviewException(kind + " failed: " + scrub(why, token));
  }

  private static String scrub(String text, String token) {
    return token == null || token.isEmpty() ? text : text.replace(token, "<token>");
  }

  @Override
  public synchronized void close() {
    if (client != null) {
      client.close();
    }
  }
}

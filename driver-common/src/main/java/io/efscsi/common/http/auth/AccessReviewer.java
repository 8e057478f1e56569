package io.efscsi.common.http.auth;

import java.util.Optional;

/**
 * The API server's answers about a request to one of our endpoints: whose token it carries
 * (TokenReview, authentication.k8s.io/v1) and whether that user may do it (SubjectAccessReview,
 * authorization.k8s.io/v1). The real adapter calls the API server; tests use an in-memory one.
 */
public interface AccessReviewer {

  /**
   * The user the bearer token belongs to; empty when the API server does not authenticate it.
   *
   * @throws AccessReviewException when the API server cannot be asked (never naming the token)
   */
  Optional<UserInfo> authenticate(String token) throws AccessReviewException;

  /**
   * Whether {@code user} may use {@code verb} on the non-resource URL {@code path}.
   *
   * @throws AccessReviewException when the API server cannot be asked
   */
  boolean allowed(UserInfo user, String path, String verb) throws AccessReviewException;
}

package io.efscsi.common.http.auth;

/**
 * A TokenReview or SubjectAccessReview that could not be made (API server unreachable, our service
 * account not allowed to create reviews, …). Its message never holds the token under review.
 */
public final class AccessReviewException extends Exception {

  private static final long serialVersionUID = 1L;

  public AccessReviewException(String message) {
    super(message);
  }
}

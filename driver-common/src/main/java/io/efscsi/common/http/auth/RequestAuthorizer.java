package io.efscsi.common.http.auth;

import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides one HTTP request the way Kubernetes' own components decide theirs ({@code
 * --authentication-kubeconfig}/{@code --authorization-kubeconfig} with a webhook): the {@code
 * Authorization: Bearer} token is reviewed, then its user's right to the verb on the non-resource
 * path. The token is never logged and never kept; failures to ask are logged once per outage.
 */
public final class RequestAuthorizer {

  private static final Logger log = LoggerFactory.getLogger(RequestAuthorizer.class);

  /** What to answer. */
  public sealed interface Decision {
    /** Serve the request. */
    record Allowed(UserInfo user) implements Decision {}

    /** 401: no bearer token, or one the API server does not authenticate. */
    record Unauthenticated(String why) implements Decision {}

    /** 403: an authenticated user without the right. */
    record Forbidden(UserInfo user, String path, String verb) implements Decision {}

    /** 503: the API server could not be asked. */
    record Unavailable(String why) implements Decision {}
  }

  private final AccessReviewer reviewer;
  private final AtomicBoolean failing = new AtomicBoolean();

  public RequestAuthorizer(AccessReviewer reviewer) {
    this.reviewer = reviewer;
  }

  /**
   * @param authorization the request's {@code Authorization} header, if any
   * @param path the non-resource URL asked for, such as {@code /metrics}
   * @param verb the Kubernetes verb, {@code get} for GET and HEAD
   */
  public Decision decide(Optional<String> authorization, String path, String verb) {
    Optional<String> token = authorization.flatMap(RequestAuthorizer::bearerToken);
    if (token.isEmpty()) {
      return new Decision.Unauthenticated("no bearer token");
    }
    try {
      Optional<UserInfo> user = reviewer.authenticate(token.get());
      if (user.isEmpty()) {
        recovered();
        return new Decision.Unauthenticated("token not authenticated by the API server");
      }
      boolean allowed = reviewer.allowed(user.get(), path, verb);
      recovered();
      return allowed
          ? new Decision.Allowed(user.get())
          : new Decision.Forbidden(user.get(), path, verb);
    } catch (AccessReviewException | RuntimeException e) {
      String why = withoutToken(e, token.get());
      if (failing.compareAndSet(false, true)) {
        log.warn(
            "cannot check requests to {}: {}; answering 503 until the API server answers",
            path,
            why);
      } else {
        log.debug("cannot check a request to {}: {}", path, why);
      }
      return new Decision.Unavailable(why);
    }
  }

  private void recovered() {
    if (failing.compareAndSet(true, false)) {
      log.info("token and access reviews answer again");
    }
  }

  /** The failure's text, the token cut out should an unexpected exception carry it. */
  private static String withoutToken(Exception e, String token) {
    String text = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return text.replace(token, "<token>");
  }

  /** The token of {@code Bearer <token>} (scheme in any case, as the API server accepts it). */
  static Optional<String> bearerToken(String header) {
    String h = header.strip();
    int space = h.indexOf(' ');
    if (space < 0 || !h.substring(0, space).toLowerCase(Locale.ROOT).equals("bearer")) {
      return Optional.empty();
    }
    String token = h.substring(space + 1).strip();
    return token.isEmpty() || token.contains(" ") ? Optional.empty() : Optional.of(token);
  }
}

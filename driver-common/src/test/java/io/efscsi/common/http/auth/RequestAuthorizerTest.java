package io.efscsi.common.http.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.efscsi.common.http.auth.RequestAuthorizer.Decision;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RequestAuthorizerTest {

  static final UserInfo PROMETHEUS = UserInfo.of("system:serviceaccount:monitoring:prometheus");

  private final InMemoryAccessReviewer api =
      new InMemoryAccessReviewer()
          .token("good", PROMETHEUS)
          .grant(PROMETHEUS.username(), "/metrics", "get");
  private final RequestAuthorizer auth = new RequestAuthorizer(api);

  private Decision decide(String header) {
    return auth.decide(Optional.ofNullable(header), "/metrics", "get");
  }

  @Test
  void bearerTokensAreTakenFromTheHeader() {
    assertEquals(Optional.of("abc"), RequestAuthorizer.bearerToken("Bearer abc"));
    assertEquals(Optional.of("abc"), RequestAuthorizer.bearerToken("bearer   abc "));
    assertEquals(Optional.of("abc"), RequestAuthorizer.bearerToken("BEARER abc"));
    assertEquals(Optional.empty(), RequestAuthorizer.bearerToken("Bearer"));
    assertEquals(Optional.empty(), RequestAuthorizer.bearerToken("Bearer "));
    assertEquals(Optional.empty(), RequestAuthorizer.bearerToken("Bearer a b"));
    assertEquals(Optional.empty(), RequestAuthorizer.bearerToken("Basic dXNlcjpwYXNz"));
    assertEquals(Optional.empty(), RequestAuthorizer.bearerToken("Bearerabc"));
  }

  @Test
  void decisions() {
    assertInstanceOf(Decision.Unauthenticated.class, decide(null));
    assertInstanceOf(Decision.Unauthenticated.class, decide("Basic dXNlcjpwYXNz"));
    assertEquals(0, api.tokenReviews(), "no token, no review");
    assertInstanceOf(Decision.Unauthenticated.class, decide("Bearer wrong"));
    assertEquals(0, api.accessReviews(), "a rejected token is not asked about");
    assertEquals(new Decision.Allowed(PROMETHEUS), decide("Bearer good"));
    api.revoke(PROMETHEUS.username(), "/metrics", "get");
    assertEquals(new Decision.Forbidden(PROMETHEUS, "/metrics", "get"), decide("Bearer good"));
  }

  @Test
  void aFailureIsUnavailableAndItsTextNeverHoldsTheToken() {
    api.failWith("review of good failed");
    Decision d = decide("Bearer good");
    Decision.Unavailable u = assertInstanceOf(Decision.Unavailable.class, d);
    assertEquals("review of <token> failed", u.why());
    assertFalse(u.why().contains("good"));
  }
}

package io.efscsi.common.http.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CachingAccessReviewerTest {

  static final UserInfo PROMETHEUS =
      UserInfo.of("system:serviceaccount:monitoring:prometheus", "system:serviceaccounts");

  /** A clock that moves only when told. */
  static final class MovedClock extends Clock {
    private Instant now = Instant.parse("2026-01-01T00:00:00Z");

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private final MovedClock clock = new MovedClock();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final InMemoryAccessReviewer api =
      new InMemoryAccessReviewer()
          .token("good", PROMETHEUS)
          .grant(PROMETHEUS.username(), "/metrics", "get");
  private final CachingAccessReviewer cache =
      new CachingAccessReviewer(api, clock, registry, CachingAccessReviewer.Settings.DEFAULT);

  private double reviews(String kind, String result) {
    return registry
        .get(CachingAccessReviewer.REVIEWS)
        .tags("kind", kind, "result", result)
        .counter()
        .count();
  }

  /** What a scrape asks: whose token, then whether that user may get /metrics. */
  private boolean scrape(String token) throws AccessReviewException {
    Optional<UserInfo> user = cache.authenticate(token);
    return user.isPresent() && cache.allowed(user.get(), "/metrics", "get");
  }

  @Test
  void authenticatedTokenIsKeptTwoMinutes() throws AccessReviewException {
    assertEquals(Optional.of(PROMETHEUS), cache.authenticate("good"));
    clock.advance(Duration.ofSeconds(119));
    assertEquals(Optional.of(PROMETHEUS), cache.authenticate("good"));
    assertEquals(1, api.tokenReviews());
    clock.advance(Duration.ofSeconds(1));
    assertEquals(Optional.of(PROMETHEUS), cache.authenticate("good"));
    assertEquals(2, api.tokenReviews());
    assertEquals(2.0, reviews("token", "authenticated"));
  }

  @Test
  void rejectedTokenIsKeptTenSeconds() throws AccessReviewException {
    assertEquals(Optional.empty(), cache.authenticate("bad"));
    clock.advance(Duration.ofSeconds(9));
    assertEquals(Optional.empty(), cache.authenticate("bad"));
    assertEquals(1, api.tokenReviews());
    // the token becomes valid (a new service account): seen once the rejection expires
    api.token("bad", PROMETHEUS);
    clock.advance(Duration.ofSeconds(1));
    assertEquals(Optional.of(PROMETHEUS), cache.authenticate("bad"));
    assertEquals(2, api.tokenReviews());
    assertEquals(1.0, reviews("token", "rejected"));
    assertEquals(1.0, reviews("token", "authenticated"));
  }

  @Test
  void allowedIsKeptFiveMinutesAndDeniedThirtySeconds() throws AccessReviewException {
    assertTrue(cache.allowed(PROMETHEUS, "/metrics", "get"));
    api.revoke(PROMETHEUS.username(), "/metrics", "get");
    clock.advance(Duration.ofSeconds(299));
    assertTrue(cache.allowed(PROMETHEUS, "/metrics", "get"), "allowed is kept 5 min");
    clock.advance(Duration.ofSeconds(1));
    assertFalse(cache.allowed(PROMETHEUS, "/metrics", "get"), "and asked again after");
    assertEquals(2, api.accessReviews());

    api.grant(PROMETHEUS.username(), "/metrics", "get");
    clock.advance(Duration.ofSeconds(29));
    assertFalse(cache.allowed(PROMETHEUS, "/metrics", "get"), "denied is kept 30 s");
    clock.advance(Duration.ofSeconds(1));
    assertTrue(cache.allowed(PROMETHEUS, "/metrics", "get"));
    assertEquals(3, api.accessReviews());
    assertEquals(2.0, reviews("access", "allowed"));
    assertEquals(1.0, reviews("access", "denied"));
  }

  @Test
  void accessAnswersAreKeptPerUserGroupsPathAndVerb() throws AccessReviewException {
    UserInfo otherGroups = UserInfo.of(PROMETHEUS.username(), "system:authenticated");
    UserInfo withExtra =
        new UserInfo(
            PROMETHEUS.username(),
            "",
            PROMETHEUS.groups(),
            Map.of("authentication.kubernetes.io/pod-name", List.of("prometheus-0")));
    assertTrue(cache.allowed(PROMETHEUS, "/metrics", "get"));
    assertTrue(cache.allowed(otherGroups, "/metrics", "get"));
    assertTrue(cache.allowed(withExtra, "/metrics", "get"));
    assertFalse(cache.allowed(PROMETHEUS, "/metrics", "post"));
    assertFalse(cache.allowed(PROMETHEUS, "/healthz", "get"));
    assertTrue(cache.allowed(PROMETHEUS, "/metrics", "get"));
    assertEquals(5, api.accessReviews());
  }

  @Test
  void scrapesWithinTheTtlCostOneReviewOfEachKind() throws AccessReviewException {
    for (int i = 0; i < 240; i++) {
      assertTrue(scrape("good"));
      clock.advance(Duration.ofMillis(400)); // 240 scrapes in 96 s
    }
    assertEquals(1, api.tokenReviews());
    assertEquals(1, api.accessReviews());
    assertEquals(1.0, reviews("token", "authenticated"));
    assertEquals(1.0, reviews("access", "allowed"));
  }

  @Test
  void anHourOfScrapesEvery15sCosts30TokenAnd12AccessReviews() throws AccessReviewException {
    for (int i = 0; i < 240; i++) {
      assertTrue(scrape("good"));
      clock.advance(Duration.ofSeconds(15));
    }
    assertEquals(30, api.tokenReviews());
    assertEquals(12, api.accessReviews());
  }

  @Test
  void tenThousandTokensNeverHoldMoreThanTheBound() throws AccessReviewException {
    api.token("good", PROMETHEUS);
    assertTrue(scrape("good"));
    for (int i = 0; i < 10_000; i++) {
      cache.authenticate("attacker-" + i);
      // the scraper keeps scraping between them: its entry is recently used and stays
      if (i % 500 == 0) {
        assertTrue(scrape("good"));
      }
      assertTrue(cache.tokenEntries() <= 1024, "entries " + cache.tokenEntries());
    }
    assertEquals(1024, cache.tokenEntries());
    assertEquals(10_001, api.tokenReviews());
    assertTrue(scrape("good"));
    assertEquals(10_001, api.tokenReviews(), "the scraper's token was kept (least recently used)");
    // the oldest attacker tokens were dropped, so asking again costs a review
    cache.authenticate("attacker-0");
    assertEquals(10_002, api.tokenReviews());
  }

  @Test
  void accessAnswersAreBoundedToo() throws AccessReviewException {
    for (int i = 0; i < 5_000; i++) {
      cache.allowed(UserInfo.of("user-" + i), "/metrics", "get");
      assertTrue(cache.accessEntries() <= 1024);
    }
    assertEquals(1024, cache.accessEntries());
  }

  @Test
  void failuresAreCountedAndNotKept() throws AccessReviewException {
    api.failWith("API server unreachable");
    AccessReviewException e =
        assertThrows(AccessReviewException.class, () -> cache.authenticate("good"));
    assertEquals("API server unreachable", e.getMessage());
    assertThrows(AccessReviewException.class, () -> cache.allowed(PROMETHEUS, "/metrics", "get"));
    assertEquals(1.0, reviews("token", "error"));
    assertEquals(1.0, reviews("access", "error"));
    api.failWith(null);
    assertTrue(scrape("good"), "the next request asks again at once");
    assertEquals(2, api.tokenReviews());
    assertEquals(2, api.accessReviews());
  }

  @Test
  void allSixSeriesArePresentFromTheStart() {
    for (String r : List.of("authenticated", "rejected", "error")) {
      assertEquals(0.0, reviews("token", r));
    }
    for (String r : List.of("allowed", "denied", "error")) {
      assertEquals(0.0, reviews("access", r));
    }
  }

  @Test
  void theKeyIsTheTokensSha256() {
    // echo -n good | sha256sum
    assertEquals(
        "770e607624d689265ca6c44884d0807d9b054d23c473c106c72be9de08b7376c",
        CachingAccessReviewer.sha256("good"));
  }
}

package io.efscsi.common.http.auth;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Remembers the API server's answers for a while, as the kubelet's webhook authenticator and
 * authorizer do, so that a scrape every 15 s costs an API call only every few minutes. Answers are
 * kept per SHA-256 of the token (never the token) and per user, groups, path and verb, in two
 * least-recently-used maps of bounded size; failures to ask are not kept.
 *
 * <p>Every call it makes to the API server is counted in {@code
 * efs_csi_http_auth_reviews_total{kind="token|access",result}}.
 */
public final class CachingAccessReviewer implements AccessReviewer {

  /** The meter name (Prometheus adds {@code _total}). */
  public static final String REVIEWS = "efs_csi_http_auth_reviews";

  /**
   * How long each kind of answer is kept, and how many of each at most.
   *
   * @param authenticated a token the API server authenticated (kube's webhook default, 2 min)
   * @param rejected a token it rejected
   * @param allowed a SubjectAccessReview that allowed (kubelet's default, 5 min)
   * @param denied a SubjectAccessReview that denied (kubelet's default, 30 s)
   * @param maxEntries the most tokens, and the most user/path/verb answers, kept
   */
  public record Settings(
      Duration authenticated,
      Duration rejected,
      Duration allowed,
      Duration denied,
      int maxEntries) {

    public static final Settings DEFAULT =
        new Settings(
            Duration.ofMinutes(2),
            Duration.ofSeconds(10),
            Duration.ofMinutes(5),
            Duration.ofSeconds(30),
            1024);

    public Settings {
      if (maxEntries < 1) {
        throw new IllegalArgumentException("maxEntries must be at least 1, got " + maxEntries);
      }
    }
  }

  private record AccessKey(UserInfo user, String path, String verb) {}

  private record Held<V>(V value, Instant expires) {}

  private final AccessReviewer delegate;
  private final Clock clock;
  private final Settings settings;
  private final Lru<String, Optional<UserInfo>> tokens;
  private final Lru<AccessKey, Boolean> access;
  private final Counter authenticated;
  private final Counter rejected;
  private final Counter tokenErrors;
  private final Counter allowed;
  private final Counter denied;
  private final Counter accessErrors;

  public CachingAccessReviewer(
      AccessReviewer delegate, Clock clock, MeterRegistry registry, Settings settings) {
    this.delegate = delegate;
    this.clock = clock;
    this.settings = settings;
    this.tokens = new Lru<>(settings.maxEntries());
    this.access = new Lru<>(settings.maxEntries());
    this.authenticated = counter(registry, "token", "authenticated");
    this.rejected = counter(registry, "token", "rejected");
    this.tokenErrors = counter(registry, "token", "error");
    this.allowed = counter(registry, "access", "allowed");
    this.denied = counter(registry, "access", "denied");
    this.accessErrors = counter(registry, "access", "error");
  }

  @Override
  public Optional<UserInfo> authenticate(String token) throws AccessReviewException {
    String key = sha256(token);
    Optional<UserInfo> cached = tokens.get(key, clock.instant());
    if (cached != null) {
      return cached;
    }
    Optional<UserInfo> user;
    try {
      user = delegate.authenticate(token);
    } catch (AccessReviewException | RuntimeException e) {
      tokenErrors.increment();
      throw e;
    }
    (user.isPresent() ? authenticated : rejected).increment();
    Duration ttl = user.isPresent() ? settings.authenticated() : settings.rejected();
    tokens.put(key, user, clock.instant().plus(ttl));
    return user;
  }

  @Override
  public boolean allowed(UserInfo user, String path, String verb) throws AccessReviewException {
    AccessKey key = new AccessKey(user, path, verb);
    Boolean cached = access.get(key, clock.instant());
    if (cached != null) {
      return cached;
    }
    boolean answer;
    try {
      answer = delegate.allowed(user, path, verb);
    } catch (AccessReviewException | RuntimeException e) {
      accessErrors.increment();
      throw e;
    }
    (answer ? allowed : denied).increment();
    Duration ttl = answer ? settings.allowed() : settings.denied();
    access.put(key, answer, clock.instant().plus(ttl));
    return answer;
  }

  /** Tokens whose answer is held now, expired ones not yet dropped included. */
  int tokenEntries() {
    return tokens.size();
  }

  /** User/path/verb answers held now, expired ones not yet dropped included. */
  int accessEntries() {
    return access.size();
  }

  /** The hex SHA-256 of the token: what the cache keys on, so that it never holds a token. */
  static String sha256(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  private static Counter counter(MeterRegistry registry, String kind, String result) {
    return Counter.builder(REVIEWS)
        .description("TokenReviews and SubjectAccessReviews sent to the API server, by answer")
        .tags("kind", kind, "result", result)
        .register(registry);
  }

  /** A least-recently-used map with expiring entries; at most {@code max} entries. */
  private static final class Lru<K, V> {
    private final int max;
    private final LinkedHashMap<K, Held<V>> map;

    Lru(int max) {
      this.max = max;
      this.map =
          new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<K, Held<V>> eldest) {
              return size() > Lru.this.max;
            }
          };
    }

    /** The value, or null when absent or expired at {@code now}. */
    synchronized V get(K key, Instant now) {
      Held<V> e = map.get(key);
      if (e == null) {
        return null;
      }
      if (!now.isBefore(e.expires())) {
        map.remove(key);
        return null;
      }
      return e.value();
    }

    synchronized void put(K key, V value, Instant expires) {
      map.put(key, new Held<>(value, expires));
    }

    synchronized int size() {
      return map.size();
    }
  }
}

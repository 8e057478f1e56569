package io.efscsi.common.http.auth;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The API server's reviews from two tables: which token is whose, and which user may use which verb
 * on which path. Counts the reviews it is asked for; can be made to fail like an unreachable API
 * server.
 */
public final class InMemoryAccessReviewer implements AccessReviewer {

  private final Map<String, UserInfo> tokens = new ConcurrentHashMap<>();
  private final Set<String> grants = ConcurrentHashMap.newKeySet();
  private final AtomicInteger tokenReviews = new AtomicInteger();
  private final AtomicInteger accessReviews = new AtomicInteger();
  private volatile String failure;

  /** {@code token} authenticates as {@code user}. */
  public InMemoryAccessReviewer token(String token, UserInfo user) {
    tokens.put(token, user);
    return this;
  }

  /** {@code username} may use {@code verb} on {@code path}. */
  public InMemoryAccessReviewer grant(String username, String path, String verb) {
    grants.add(username + " " + verb + " " + path);
    return this;
  }

  public InMemoryAccessReviewer revoke(String username, String path, String verb) {
    grants.remove(username + " " + verb + " " + path);
    return this;
  }

  /** Every review fails with {@code message} from now on; null answers again. */
  public InMemoryAccessReviewer failWith(String message) {
    failure = message;
    return this;
  }

  public int tokenReviews() {
    return tokenReviews.get();
  }

  public int accessReviews() {
    return accessReviews.get();
  }

  @Override
  public Optional<UserInfo> authenticate(String token) throws AccessReviewException {
    tokenReviews.incrementAndGet();
    String f = failure;
    if (f != null) {
      throw new AccessReviewException(f);
    }
    return Optional.ofNullable(tokens.get(token));
  }

  @Override
  public boolean allowed(UserInfo user, String path, String verb) throws AccessReviewException {
    accessReviews.incrementAndGet();
    String f = failure;
    if (f != null) {
      throw new AccessReviewException(f);
    }
    return grants.contains(user.username() + " " + verb + " " + path);
  }
}

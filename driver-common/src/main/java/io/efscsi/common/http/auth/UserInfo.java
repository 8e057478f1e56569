package io.efscsi.common.http.auth;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Who a token belongs to, as a TokenReview's {@code status.user} says, and what a
 * SubjectAccessReview asks about.
 *
 * @param username for example {@code system:serviceaccount:monitoring:prometheus}
 * @param uid the user's uid; may be empty
 * @param groups the user's groups, in the order the review gave them
 * @param extra the authenticator's extra attributes (a service account token's pod name, …)
 */
public record UserInfo(
    String username, String uid, List<String> groups, Map<String, List<String>> extra) {

  public UserInfo {
    Objects.requireNonNull(username, "username");
    uid = Objects.requireNonNullElse(uid, "");
    groups = groups == null ? List.of() : List.copyOf(groups);
    Map<String, List<String>> values = new HashMap<>();
    if (extra != null) {
      extra.forEach((key, value) -> values.put(key, List.copyOf(value)));
    }
    extra = Map.copyOf(values);
  }

  /** A user with no uid and no extra attributes (tests, and authenticators that give none). */
  public static UserInfo of(String username, String... groups) {
    return new UserInfo(username, "", List.of(groups), Map.of());
  }
}

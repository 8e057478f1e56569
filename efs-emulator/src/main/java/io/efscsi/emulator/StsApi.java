package io.efscsi.emulator;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * STS AssumeRole (query API, XML answers): a registered role, with its external id when it has one,
 * gets temporary credentials whose access key then acts in the role's account.
 */
final class StsApi {

  private record Role(String account, Optional<String> externalId) {}

  record Answer(int status, String xml) {}

  private static final String NS = "https://sts.amazonaws.com/doc/2011-06-15/";

  private final Map<String, Role> roles = new ConcurrentHashMap<>();
  private final Map<String, String> sessions = new ConcurrentHashMap<>();

  void addRole(String roleArn, String account, Optional<String> externalId) {
    roles.put(roleArn, new Role(account, externalId));
  }

  Collection<String> accounts() {
    return roles.values().stream().map(Role::account).toList();
  }

  /** The account of an access key issued by AssumeRole. */
  Optional<String> accountOf(String accessKeyId) {
    return Optional.ofNullable(sessions.get(accessKeyId));
  }

  Answer assumeRole(Map<String, String> form) {
    String arn = form.getOrDefault("RoleArn", "");
    Role role = roles.get(arn);
    String externalId = form.get("ExternalId");
    if (role == null
        || (role.externalId().isPresent() && !role.externalId().get().equals(externalId))) {
      return new Answer(
          403,
          "<ErrorResponse xmlns=\""
              + NS
              + "\"><Error><Type>Sender</Type><Code>AccessDenied</Code>"
              + "<Message>Not authorized to perform sts:AssumeRole on "
              + arn
              + "</Message></Error><RequestId>"
              + UUID.randomUUID()
              + "</RequestId></ErrorResponse>");
    }
    String key = "ASIA" + EfsState.hex(16).toUpperCase(Locale.ROOT);
    sessions.put(key, role.account());
    String session = form.getOrDefault("RoleSessionName", "session");
    String assumed =
        arn.replace(":role/", ":assumed-role/").replace("arn:aws:iam:", "arn:aws:sts:")
            + "/"
            + session;
    return new Answer(
        200,
        "<AssumeRoleResponse xmlns=\""
            + NS
            + "\"><AssumeRoleResult><Credentials><AccessKeyId>"
            + key
            + "</AccessKeyId><SecretAccessKey>"
            + EfsState.hex(40)
            + "</SecretAccessKey><SessionToken>"
            + EfsState.hex(64)
            + "</SessionToken><Expiration>"
            + Instant.now().plusSeconds(3600).truncatedTo(ChronoUnit.SECONDS)
            + "</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROA"
            + EfsState.hex(16).toUpperCase(Locale.ROOT)
            + ":"
            + session
            + "</AssumedRoleId><Arn>"
            + assumed
            + "</Arn></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>"
            + UUID.randomUUID()
            + "</RequestId></ResponseMetadata></AssumeRoleResponse>");
  }
}

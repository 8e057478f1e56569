package io.efscsi.node.iam;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.Optional;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The SigV4 signature efs-utils puts into the client certificate for {@code iam} mounts: a signed,
 * never-sent {@code GET /?Action=Connect&PublicKeyHash=…} request for service {@code
 * elasticfilesystem} (Amazon S3 Files: {@code s3files}), with the file system id as the {@code
 * host} header. It ties the caller's IAM identity to the certificate's key.
 *
 * <p>Reproduces efs-utils' quirk on purpose: its canonical request has <em>no blank line</em> after
 * the header block ({@code host:<fs-id>\nhost\n<payload hash>}), unlike standard SigV4. The string
 * to sign and the signing key chain are standard.
 *
 * @param accessKeyId the credentials' access key id
 * @param signature the 64 lower-case hex characters of the signature
 * @param time the signing instant (X-Amz-Date), whole seconds
 * @param sessionToken the session token of temporary credentials
 */
public record ConnectSignature(
    String accessKeyId, String signature, Instant time, Optional<String> sessionToken) {

  static final String SERVICE = "elasticfilesystem";

  /** The signing name of Amazon S3 Files mounts (efs-utils' {@code S3FILES_SERVICE_NAME}). */
  public static final String S3FILES_SERVICE = "s3files";

  static final String ALGORITHM = "AWS4-HMAC-SHA256";
  static final String EXPIRES = "86400";
  private static final String EMPTY_SHA256 =
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  private static final DateTimeFormatter AMZ_DATE =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter DATE =
      DateTimeFormatter.ofPattern("yyyyMMdd").withZone(ZoneOffset.UTC);

  @Override
  public String toString() {
    return "ConnectSignature[accessKeyId="
        + accessKeyId
        + ", time="
        + time
        + ", sessionToken="
        + (sessionToken.isPresent() ? "<redacted>" : "none")
        + "]";
  }

  /** Credentials as the signature needs them (from any SDK {@code AwsCredentialsIdentity}). */
  public record Credentials(
      String accessKeyId, String secretAccessKey, Optional<String> sessionToken) {
    @Override
    public String toString() {
      return "Credentials[accessKeyId=" + accessKeyId + ", secret and token redacted]";
    }
  }

  /** Signs the Connect request for this key hash, file system, region and instant. */
  public static ConnectSignature sign(
      Credentials credentials,
      String publicKeyHash,
      String fileSystemId,
      String region,
      Instant time) {
    return sign(credentials, publicKeyHash, fileSystemId, region, time, SERVICE);
  }

  /**
   * The same for the signing name {@code service} ({@code elasticfilesystem} or {@code s3files}).
   */
  public static ConnectSignature sign(
      Credentials credentials,
      String publicKeyHash,
      String fileSystemId,
      String region,
      Instant time,
      String service) {
    String canonical =
        canonicalRequest(
            canonicalQuery(credentials, publicKeyHash, region, time, service), fileSystemId);
    return new ConnectSignature(
        credentials.accessKeyId(),
        signCanonicalRequest(canonical, credentials.secretAccessKey(), region, time, service),
        time,
        credentials.sessionToken());
  }

  /** The canonical query string: keys sorted, values encoded as Python's {@code quote_plus}. */
  static String canonicalQuery(
      Credentials credentials, String publicKeyHash, String region, Instant time) {
    return canonicalQuery(credentials, publicKeyHash, region, time, SERVICE);
  }

  static String canonicalQuery(
      Credentials credentials, String publicKeyHash, String region, Instant time, String service) {
    TreeMap<String, String> params = new TreeMap<>();
    params.put("Action", "Connect");
    params.put("PublicKeyHash", quotePlus(publicKeyHash));
    params.put("X-Amz-Algorithm", ALGORITHM);
    params.put(
        "X-Amz-Credential",
        quotePlus(credentials.accessKeyId() + "/" + scope(region, time, service)));
    params.put("X-Amz-Date", AMZ_DATE.format(time));
    params.put("X-Amz-Expires", EXPIRES);
    credentials.sessionToken().ifPresent(t -> params.put("X-Amz-Security-Token", quotePlus(t)));
    params.put("X-Amz-SignedHeaders", "host");
    StringBuilder b = new StringBuilder();
    params.forEach((k, v) -> b.append(b.isEmpty() ? "" : "&").append(k).append('=').append(v));
    return b.toString();
  }

  /** efs-utils' canonical request: host header = file system id, no blank line after it. */
  static String canonicalRequest(String canonicalQuery, String fileSystemId) {
    return "GET\n/\n" + canonicalQuery + "\nhost:" + fileSystemId + "\nhost\n" + EMPTY_SHA256;
  }

  /** Standard SigV4 from the canonical request on: string to sign, signing key, HMAC. */
  static String signCanonicalRequest(
      String canonicalRequest, String secretAccessKey, String region, Instant time) {
    return signCanonicalRequest(canonicalRequest, secretAccessKey, region, time, SERVICE);
  }

  static String signCanonicalRequest(
      String canonicalRequest,
      String secretAccessKey,
      String region,
      Instant time,
      String service) {
    String stringToSign =
        ALGORITHM
            + "\n"
            + AMZ_DATE.format(time)
            + "\n"
            + scope(region, time, service)
            + "\n"
            + HexFormat.of().formatHex(sha256(canonicalRequest));
    byte[] key =
        hmac(("AWS4" + secretAccessKey).getBytes(StandardCharsets.UTF_8), DATE.format(time));
    key = hmac(key, region);
    key = hmac(key, service);
    key = hmac(key, "aws4_request");
    return HexFormat.of().formatHex(hmac(key, stringToSign));
  }

  static String scope(String region, Instant time) {
    return scope(region, time, SERVICE);
  }

  static String scope(String region, Instant time, String service) {
    return DATE.format(time) + "/" + region + "/" + service + "/aws4_request";
  }

  /**
   * Python's {@code urllib.parse.quote_plus}: letters, digits and {@code _.-~} stay, space becomes
   * {@code +}, every other UTF-8 byte becomes {@code %XX} (upper case).
   */
  static String quotePlus(String s) {
    StringBuilder b = new StringBuilder();
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '_'
          || c == '.'
          || c == '-'
          || c == '~') {
        b.append((char) c);
      } else if (c == ' ') {
        b.append('+');
      } else {
        b.append('%').append(HexFormat.of().withUpperCase().toHexDigits((byte) c));
      }
    }
    return b.toString();
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  private static byte[] hmac(byte[] key, String data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }
}

package io.efscsi.node.iam;

import io.efscsi.common.x509.Der;
import io.efscsi.common.x509.SelfSignedCertificate;
import io.efscsi.common.x509.SelfSignedCertificate.Extension;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Builds the self-signed client certificate efs-utils builds with {@code openssl req/ca}: subject
 * {@code CN=<host name, at most 64 chars>}, issuer = subject, valid from 15 minutes before to 3
 * hours after issue, SHA-256 with RSA, and these non-critical extensions in this order:
 *
 * <ul>
 *   <li>subjectKeyIdentifier (SHA-1 of the public key bits, RFC 5280 method 1)
 *   <li>{@value #ACCESS_POINT_OID} UTF8String access point id (access point mounts)
 *   <li>{@value #CLIENT_AUTH_OID} SEQUENCE {accessKeyId UTF8String, signature OCTET STRING of the
 *       64 ASCII hex characters, sigv4DateTime UTCTime, [0] EXPLICIT UTF8String session token}
 *       ({@code iam} mounts)
 *   <li>{@value #FILE_SYSTEM_OID} UTF8String file system id (always)
 *   <li>{@value #CLIENT_INFO_OID} SEQUENCE {source UTF8String, version UTF8String} (always)
 * </ul>
 */
final class CertificateBuilder {

  static final String ACCESS_POINT_OID = "1.3.6.1.4.1.4843.7.1";
  static final String CLIENT_AUTH_OID = "1.3.6.1.4.1.4843.7.2";
  static final String FILE_SYSTEM_OID = "1.3.6.1.4.1.4843.7.3";
  static final String CLIENT_INFO_OID = "1.3.6.1.4.1.4843.7.4";
  static final Duration NOT_BEFORE = Duration.ofMinutes(15);
  static final Duration NOT_AFTER = Duration.ofHours(3);
  static final int MAX_COMMON_NAME = 64;

  private static final String SUBJECT_KEY_IDENTIFIER = "2.5.29.14";
  private static final SecureRandom RANDOM = new SecureRandom();

  /** What goes into one certificate; {@code issuedAt} in whole seconds. */
  record Contents(
      String commonName,
      String fileSystemId,
      Optional<String> accessPointId,
      Optional<ConnectSignature> auth,
      ClientCertificates.ClientInfo clientInfo,
      Instant issuedAt) {}

  private CertificateBuilder() {}

  /** SHA-1 hex of the SubjectPublicKey BIT STRING contents: efs-utils' PublicKeyHash and SKI. */
  static String publicKeyHash(PublicKey key) {
    byte[] bits = SelfSignedCertificate.publicKeyBits(key);
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bits));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-1 is not available", e);
    }
  }

  static X509Certificate build(KeyPair keys, Contents c) throws GeneralSecurityException {
    return build(keys, c, new BigInteger(63, RANDOM).add(BigInteger.ONE));
  }

  /** {@link #build(KeyPair, Contents)} with the serial given (tests compare whole encodings). */
  static X509Certificate build(KeyPair keys, Contents c, BigInteger serial)
      throws GeneralSecurityException {
    String cn =
        c.commonName().length() > MAX_COMMON_NAME
            ? c.commonName().substring(0, MAX_COMMON_NAME)
            : c.commonName();
    List<Extension> extensions = new ArrayList<>();
    extensions.add(
        new Extension(
            SUBJECT_KEY_IDENTIFIER,
            false,
            Der.octetString(HexFormat.of().parseHex(publicKeyHash(keys.getPublic())))));
    c.accessPointId()
        .ifPresent(ap -> extensions.add(new Extension(ACCESS_POINT_OID, false, Der.utf8(ap))));
    c.auth().ifPresent(a -> extensions.add(new Extension(CLIENT_AUTH_OID, false, clientAuth(a))));
    extensions.add(new Extension(FILE_SYSTEM_OID, false, Der.utf8(c.fileSystemId())));
    extensions.add(
        new Extension(
            CLIENT_INFO_OID,
            false,
            Der.sequence(Der.utf8(c.clientInfo().source()), Der.utf8(c.clientInfo().version()))));
    try {
      return SelfSignedCertificate.write(
          keys,
          cn,
          serial,
          c.issuedAt().minus(NOT_BEFORE),
          c.issuedAt().plus(NOT_AFTER),
          extensions,
          SelfSignedCertificate.Algorithm.SHA256_WITH_RSA);
    } catch (IllegalArgumentException e) {
      throw new GeneralSecurityException("cannot build the client certificate: " + e, e);
    }
  }

  private static byte[] clientAuth(ConnectSignature s) {
    byte[] id = Der.utf8(s.accessKeyId());
    byte[] signature = Der.octetString(s.signature().getBytes(StandardCharsets.US_ASCII));
    byte[] time = Der.utcTime(s.time());
    return s.sessionToken().isPresent()
        ? Der.sequence(id, signature, time, Der.explicit(0, Der.utf8(s.sessionToken().get())))
        : Der.sequence(id, signature, time);
  }
}

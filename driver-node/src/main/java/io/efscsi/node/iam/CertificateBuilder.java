package io.efscsi.node.iam;

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
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Date;
import java.util.HexFormat;
import java.util.Optional;
import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1EncodableVector;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.DERSequence;
import org.bouncycastle.asn1.DERTaggedObject;
import org.bouncycastle.asn1.DERUTCTime;
import org.bouncycastle.asn1.DERUTF8String;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

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

  private static final DateTimeFormatter UTC_TIME =
      DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);
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
    byte[] bits = SubjectPublicKeyInfo.getInstance(key.getEncoded()).getPublicKeyData().getBytes();
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bits));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-1 is not available", e);
    }
  }

  static X509Certificate build(KeyPair keys, Contents c) throws GeneralSecurityException {
    String cn =
        c.commonName().length() > MAX_COMMON_NAME
            ? c.commonName().substring(0, MAX_COMMON_NAME)
            : c.commonName();
    X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, cn).build();
    SubjectPublicKeyInfo spki = SubjectPublicKeyInfo.getInstance(keys.getPublic().getEncoded());
    X509v3CertificateBuilder b =
        new X509v3CertificateBuilder(
            name,
            new BigInteger(63, RANDOM).add(BigInteger.ONE),
            Date.from(c.issuedAt().minus(NOT_BEFORE)),
            Date.from(c.issuedAt().plus(NOT_AFTER)),
            name,
            spki);
    try {
      b.addExtension(
          Extension.subjectKeyIdentifier,
          false,
          new SubjectKeyIdentifier(HexFormat.of().parseHex(publicKeyHash(keys.getPublic()))));
      if (c.accessPointId().isPresent()) {
        b.addExtension(oid(ACCESS_POINT_OID), false, new DERUTF8String(c.accessPointId().get()));
      }
      if (c.auth().isPresent()) {
        b.addExtension(oid(CLIENT_AUTH_OID), false, clientAuth(c.auth().get()));
      }
      b.addExtension(oid(FILE_SYSTEM_OID), false, new DERUTF8String(c.fileSystemId()));
      b.addExtension(
          oid(CLIENT_INFO_OID),
          false,
          sequence(
              new DERUTF8String(c.clientInfo().source()),
              new DERUTF8String(c.clientInfo().version())));
      return new JcaX509CertificateConverter()
          .getCertificate(
              b.build(new JcaContentSignerBuilder("SHA256withRSA").build(keys.getPrivate())));
    } catch (CertIOException | OperatorCreationException e) {
      throw new GeneralSecurityException("cannot build the client certificate: " + e, e);
    }
  }

  private static DERSequence clientAuth(ConnectSignature s) {
    ASN1EncodableVector v = new ASN1EncodableVector();
    v.add(new DERUTF8String(s.accessKeyId()));
    v.add(new DEROctetString(s.signature().getBytes(StandardCharsets.US_ASCII)));
    v.add(new DERUTCTime(UTC_TIME.format(s.time())));
    s.sessionToken().ifPresent(t -> v.add(new DERTaggedObject(true, 0, new DERUTF8String(t))));
    return new DERSequence(v);
  }

  private static DERSequence sequence(ASN1Encodable... items) {
    return new DERSequence(items);
  }

  private static ASN1ObjectIdentifier oid(String oid) {
    return new ASN1ObjectIdentifier(oid);
  }
}

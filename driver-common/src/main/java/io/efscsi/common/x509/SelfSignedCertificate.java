package io.efscsi.common.x509;

import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * Writes a self-signed X.509 v3 certificate (RFC 5280) in DER and signs it with the JDK's {@link
 * Signature}: the client certificate of a TLS mount and the plugins' self-signed HTTPS certificate.
 * Subject and issuer are one common name; the extensions come in the order given. The JDK's {@link
 * CertificateFactory} reads the result back, so what is returned has been parsed by the same code
 * that checks certificates elsewhere.
 */
public final class SelfSignedCertificate {

  /** One extension: its OID, whether it is critical, and its value (a DER element). */
  public record Extension(String oid, boolean critical, byte[] value) {}

  /** The signature algorithms used here, with their AlgorithmIdentifier. */
  public enum Algorithm {
    /** sha256WithRSAEncryption, parameters NULL (RFC 4055). */
    SHA256_WITH_RSA("SHA256withRSA", Der.sequence(Der.oid("1.2.840.113549.1.1.11"), Der.nul())),
    /** ecdsa-with-SHA256, parameters absent (RFC 5758). */
    SHA256_WITH_ECDSA("SHA256withECDSA", Der.sequence(Der.oid("1.2.840.10045.4.3.2")));

    private final String jca;
    private final byte[] identifier;

    Algorithm(String jca, byte[] identifier) {
      this.jca = jca;
      this.identifier = identifier;
    }
  }

  private static final String COMMON_NAME = "2.5.4.3";

  private SelfSignedCertificate() {}

  /**
   * The certificate of {@code keys}' public key, signed with its private key: serial {@code serial}
   * (positive), valid from {@code notBefore} to {@code notAfter} (whole seconds), subject and
   * issuer {@code CN=commonName} (a UTF8String).
   */
  public static X509Certificate write(
      KeyPair keys,
      String commonName,
      BigInteger serial,
      Instant notBefore,
      Instant notAfter,
      List<Extension> extensions,
      Algorithm algorithm)
      throws GeneralSecurityException {
    if (serial.signum() <= 0) {
      throw new IllegalArgumentException("a certificate serial must be positive, not " + serial);
    }
    byte[] name = Der.sequence(Der.set(Der.sequence(Der.oid(COMMON_NAME), Der.utf8(commonName))));
    byte[][] exts = new byte[extensions.size()][];
    for (int i = 0; i < exts.length; i++) {
      Extension e = extensions.get(i);
      exts[i] =
          e.critical()
              ? Der.sequence(Der.oid(e.oid()), Der.bool(true), Der.octetString(e.value()))
              : Der.sequence(Der.oid(e.oid()), Der.octetString(e.value()));
    }
    byte[] tbs =
        Der.sequence(
            Der.explicit(0, Der.integer(BigInteger.TWO)), // v3
            Der.integer(serial),
            algorithm.identifier,
            name,
            Der.sequence(Der.time(notBefore), Der.time(notAfter)),
            name,
            keys.getPublic().getEncoded(), // SubjectPublicKeyInfo, DER already
            exts.length == 0 ? new byte[0] : Der.explicit(3, Der.sequence(exts)));
    Signature signer = Signature.getInstance(algorithm.jca);
    signer.initSign(keys.getPrivate());
    signer.update(tbs);
    byte[] der = Der.sequence(tbs, algorithm.identifier, Der.bitString(signer.sign()));
    return (X509Certificate)
        CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
  }

  /**
   * The subjectPublicKey BIT STRING's octets of {@code key}'s SubjectPublicKeyInfo (what a subject
   * key identifier hashes, RFC 5280 4.2.1.2 method 1).
   */
  public static byte[] publicKeyBits(PublicKey key) {
    byte[] spki = Der.contents(key.getEncoded(), 0x30);
    byte[] rest = Arrays.copyOfRange(spki, Der.length(spki), spki.length); // after AlgorithmId
    byte[] bits = Der.contents(rest, 0x03);
    if (bits.length == 0 || bits[0] != 0) {
      throw new IllegalArgumentException("the public key is not a whole number of octets");
    }
    return Arrays.copyOfRange(bits, 1, bits.length);
  }
}

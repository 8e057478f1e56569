package io.efscsi.common.http;

import io.efscsi.common.config.HostPort;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * An in-memory self-signed server certificate (ECDSA P-256, one year), made at start when HTTPS is
 * required and no certificate files are given: what Kubernetes' components do without {@code
 * --tls-cert-file}. Its names are the host's name, {@code localhost}, the bind address when it is a
 * specific one, and {@code 127.0.0.1}. Scrapers either skip verification or pin it by the SHA-256
 * fingerprint logged at start.
 *
 * @param context a server context presenting the certificate
 * @param certificate the certificate
 */
public record SelfSignedTls(SSLContext context, X509Certificate certificate) {

  /** How long the certificate is valid after it is made. */
  public static final Duration VALIDITY = Duration.ofDays(365);

  /** How far before its making it is valid from, for peers whose clock is behind ours. */
  static final Duration BACKDATE = Duration.ofHours(1);

  /**
   * Makes a certificate for a server bound to {@code bind} on a host named {@code hostname}.
   *
   * @throws IOException when the JDK cannot make an EC key or sign (it always can)
   */
  public static SelfSignedTls generate(HostPort bind, String hostname, Clock clock)
      throws IOException {
    try {
      KeyPairGenerator keys = KeyPairGenerator.getInstance("EC");
      keys.initialize(new ECGenParameterSpec("secp256r1"));
      KeyPair pair = keys.generateKeyPair();
      Instant now = clock.instant();
      X500Name subject =
          new X500NameBuilder(BCStyle.INSTANCE)
              .addRDN(BCStyle.CN, hostname + "@" + now.getEpochSecond())
              .build();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              subject,
              new BigInteger(127, new SecureRandom()).add(BigInteger.ONE),
              Date.from(now.minus(BACKDATE)),
              Date.from(now.plus(VALIDITY)),
              subject,
              pair.getPublic());
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      builder.addExtension(
          Extension.subjectAlternativeName, false, subjectAltNames(bind, hostname));
      X509Certificate cert =
          new JcaX509CertificateConverter()
              .getCertificate(
                  builder.build(
                      new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
      return new SelfSignedTls(
          PemTls.serverContext(pair.getPrivate(), new Certificate[] {cert}), cert);
    } catch (GeneralSecurityException | OperatorCreationException | CertIOException e) {
      throw new IOException("cannot make a self-signed certificate: " + e.getMessage(), e);
    }
  }

  /** The certificate's SHA-256 fingerprint, {@code AB:CD:…}, as {@code openssl x509} prints it. */
  public String fingerprint() {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded());
      return HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot hash the certificate", e);
    }
  }

  /** The names the certificate is for, as written in its subjectAltName extension. */
  static GeneralNames subjectAltNames(HostPort bind, String hostname) {
    Set<String> dns = new LinkedHashSet<>();
    Set<String> ips = new LinkedHashSet<>();
    if (!hostname.isBlank()) {
      dns.add(hostname.toLowerCase(Locale.ROOT));
    }
    dns.add("localhost");
    Optional<InetAddress> literal = literal(bind.host());
    if (literal.isPresent() && !literal.get().isAnyLocalAddress()) {
      ips.add(literal.get().getHostAddress());
    } else if (literal.isEmpty() && !bind.host().isBlank()) {
      dns.add(bind.host().toLowerCase(Locale.ROOT));
    }
    ips.add("127.0.0.1");
    List<GeneralName> names = new ArrayList<>();
    dns.forEach(n -> names.add(new GeneralName(GeneralName.dNSName, n)));
    ips.forEach(n -> names.add(new GeneralName(GeneralName.iPAddress, n)));
    return new GeneralNames(names.toArray(GeneralName[]::new));
  }

  private static Optional<InetAddress> literal(String host) {
    if (host.isBlank()) {
      return Optional.empty();
    }
    try {
      return Optional.of(InetAddress.ofLiteral(host));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}

package io.efscsi.common.http;

import io.efscsi.common.config.HostPort;
import io.efscsi.common.x509.Der;
import io.efscsi.common.x509.SelfSignedCertificate;
import io.efscsi.common.x509.SelfSignedCertificate.Extension;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
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
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;

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

  private static final String BASIC_CONSTRAINTS = "2.5.29.19";
  private static final String KEY_USAGE = "2.5.29.15";
  private static final String EXTENDED_KEY_USAGE = "2.5.29.37";
  private static final String SUBJECT_ALT_NAME = "2.5.29.17";
  private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";

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
      X509Certificate cert =
          certificate(
              pair,
              new BigInteger(127, new SecureRandom()).add(BigInteger.ONE),
              clock.instant(),
              bind,
              hostname);
      return new SelfSignedTls(
          PemTls.serverContext(pair.getPrivate(), new Certificate[] {cert}), cert);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IOException("cannot make a self-signed certificate: " + e.getMessage(), e);
    }
  }

  /** The certificate of {@link #generate}, with its key, serial and time given. */
  static X509Certificate certificate(
      KeyPair pair, BigInteger serial, Instant now, HostPort bind, String hostname)
      throws GeneralSecurityException {
    return SelfSignedCertificate.write(
        pair,
        hostname + "@" + now.getEpochSecond(),
        serial,
        now.minus(BACKDATE),
        now.plus(VALIDITY),
        List.of(
            new Extension(BASIC_CONSTRAINTS, true, Der.sequence()), // not a CA
            new Extension(KEY_USAGE, true, Der.namedBits(1)), // digitalSignature
            new Extension(EXTENDED_KEY_USAGE, false, Der.sequence(Der.oid(SERVER_AUTH))),
            new Extension(SUBJECT_ALT_NAME, false, subjectAltNames(bind, hostname))),
        SelfSignedCertificate.Algorithm.SHA256_WITH_ECDSA);
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

  /**
   * The names the certificate is for, as written in its subjectAltName extension: GeneralNames of
   * dNSName ({@code [2] IA5String}) and iPAddress ({@code [7] OCTET STRING}) entries.
   */
  static byte[] subjectAltNames(HostPort bind, String hostname) {
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
    List<byte[]> names = new ArrayList<>();
    dns.forEach(n -> names.add(Der.implicitPrimitive(2, n.getBytes(StandardCharsets.US_ASCII))));
    ips.forEach(n -> names.add(Der.implicitPrimitive(7, InetAddress.ofLiteral(n).getAddress())));
    return Der.sequence(names.toArray(byte[][]::new));
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

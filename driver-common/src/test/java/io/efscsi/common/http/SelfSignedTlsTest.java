package io.efscsi.common.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.config.HostPort;
import java.math.BigInteger;
import java.net.InetAddress;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;

class SelfSignedTlsTest {

  static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
  static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  /** The certificate's subjectAltNames as "dns:name" and "ip:address". */
  static Set<String> names(X509Certificate cert) throws CertificateParsingException {
    return cert.getSubjectAlternativeNames().stream()
        .map(n -> ((Integer) n.get(0) == 2 ? "dns:" : "ip:") + n.get(1))
        .collect(Collectors.toSet());
  }

  @Test
  void namesTheHostLocalhostTheBindAddressAndLoopback() throws Exception {
    X509Certificate cert =
        SelfSignedTls.generate(new HostPort("10.1.2.3", 3302), "ip-10-1-2-3.ec2.internal", CLOCK)
            .certificate();
    assertEquals(
        Set.of("dns:ip-10-1-2-3.ec2.internal", "dns:localhost", "ip:10.1.2.3", "ip:127.0.0.1"),
        names(cert));
  }

  @Test
  void aWildcardBindAddsNoAddressAndAHostNameBindIsADnsName() throws Exception {
    assertEquals(
        Set.of("dns:node-a", "dns:localhost", "ip:127.0.0.1"),
        names(
            SelfSignedTls.generate(new HostPort("0.0.0.0", 3302), "node-a", CLOCK).certificate()));
    assertEquals(
        Set.of("dns:node-a", "dns:localhost", "ip:127.0.0.1"),
        names(SelfSignedTls.generate(new HostPort("", 3302), "node-a", CLOCK).certificate()));
    assertEquals(
        Set.of("dns:node-a", "dns:localhost", "dns:metrics.example", "ip:127.0.0.1"),
        names(
            SelfSignedTls.generate(new HostPort("metrics.example", 3302), "Node-A", CLOCK)
                .certificate()));
    assertTrue(
        names(SelfSignedTls.generate(new HostPort("::1", 3302), "node-a", CLOCK).certificate())
            .contains("ip:0:0:0:0:0:0:0:1"));
  }

  @Test
  void anEcP256ServerCertificateValidForAYear() throws Exception {
    X509Certificate cert =
        SelfSignedTls.generate(new HostPort("127.0.0.1", 0), "node-a", CLOCK).certificate();
    cert.checkValidity(Date.from(NOW));
    cert.verify(cert.getPublicKey());
    assertEquals("EC", cert.getPublicKey().getAlgorithm());
    assertEquals(
        256, ((ECPublicKey) cert.getPublicKey()).getParams().getCurve().getField().getFieldSize());
    assertEquals("SHA256withECDSA", cert.getSigAlgName());
    assertEquals(NOW.plus(Duration.ofDays(365)), cert.getNotAfter().toInstant());
    assertEquals(NOW.minus(Duration.ofHours(1)), cert.getNotBefore().toInstant());
    assertEquals(-1, cert.getBasicConstraints(), "not a CA");
    assertEquals(List.of("1.3.6.1.5.5.7.3.1"), cert.getExtendedKeyUsage(), "serverAuth");
    assertEquals("CN=node-a@" + NOW.getEpochSecond(), cert.getSubjectX500Principal().getName());
  }

  @Test
  void theFingerprintIsTheSha256OfTheCertificateAndEachStartMakesANewKey() throws Exception {
    SelfSignedTls a = SelfSignedTls.generate(new HostPort("127.0.0.1", 0), "node-a", CLOCK);
    SelfSignedTls b = SelfSignedTls.generate(new HostPort("127.0.0.1", 0), "node-a", CLOCK);
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(a.certificate().getEncoded());
    assertEquals(HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest), a.fingerprint());
    assertEquals(95, a.fingerprint().length());
    assertNotEquals(a.certificate().getPublicKey(), b.certificate().getPublicKey());
    assertNotEquals(a.fingerprint(), b.fingerprint());
  }

  /**
   * The certificate as BouncyCastle wrote it before the plugins stopped shipping it (the same
   * calls): its to-be-signed part must be byte for byte the one written now. ECDSA signatures are
   * random, so the signatures are only checked to verify.
   */
  @Test
  void writesTheBytesBouncyCastleWrote() throws Exception {
    var g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair pair = g.generateKeyPair();
    BigInteger serial = new BigInteger("170141183460469231731687303715884105727");
    Instant now = Instant.parse("2026-12-01T20:05:27.750Z");
    for (HostPort bind :
        List.of(
            new HostPort("10.1.2.3", 3302),
            new HostPort("0.0.0.0", 3302),
            new HostPort("", 3302),
            new HostPort("::1", 3302),
            new HostPort("metrics.example", 3302))) {
      X509Certificate ours =
          SelfSignedTls.certificate(pair, serial, now, bind, "Ip-10-1-2-3.EC2.internal");
      X509Certificate theirs = bouncyCastle(pair, serial, now, bind, "Ip-10-1-2-3.EC2.internal");
      assertEquals(
          HexFormat.of().formatHex(theirs.getTBSCertificate()),
          HexFormat.of().formatHex(ours.getTBSCertificate()),
          bind.toString());
      assertEquals(theirs.getSigAlgName(), ours.getSigAlgName());
      ours.verify(pair.getPublic());
    }
  }

  private static X509Certificate bouncyCastle(
      KeyPair pair, BigInteger serial, Instant now, HostPort bind, String hostname)
      throws Exception {
    var subject =
        new X500NameBuilder(BCStyle.INSTANCE)
            .addRDN(BCStyle.CN, hostname + "@" + now.getEpochSecond())
            .build();
    var builder =
        new JcaX509v3CertificateBuilder(
            subject,
            serial,
            Date.from(now.minus(SelfSignedTls.BACKDATE)),
            Date.from(now.plus(SelfSignedTls.VALIDITY)),
            subject,
            pair.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
    builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
    builder.addExtension(
        Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
    builder.addExtension(
        Extension.subjectAlternativeName, false, bouncyCastleNames(bind, hostname));
    return new JcaX509CertificateConverter()
        .getCertificate(
            builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
  }

  /** The subjectAltNames as the BouncyCastle version chose and encoded them. */
  private static GeneralNames bouncyCastleNames(HostPort bind, String hostname) {
    Set<String> dns = new LinkedHashSet<>();
    Set<String> ips = new LinkedHashSet<>();
    if (!hostname.isBlank()) {
      dns.add(hostname.toLowerCase(Locale.ROOT));
    }
    dns.add("localhost");
    Optional<InetAddress> literal;
    try {
      literal =
          bind.host().isBlank()
              ? Optional.empty()
              : Optional.of(InetAddress.ofLiteral(bind.host()));
    } catch (IllegalArgumentException e) {
      literal = Optional.empty();
    }
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
}

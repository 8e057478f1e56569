package io.efscsi.common.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.config.HostPort;
import java.security.MessageDigest;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
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
    cert.checkValidity(java.util.Date.from(NOW));
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
}

package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
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
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client certificate is written without BouncyCastle now; here BouncyCastle writes it the way
 * this driver did before (the same calls), and the two must be the same bytes, signature included
 * (RSA PKCS#1 v1.5 signatures are deterministic), for every shape of certificate a mount makes.
 */
class CertificateBuilderTest {

  static final Instant ISSUED = Instant.parse("2024-01-15T10:20:30Z");
  static final ClientCertificates.ClientInfo INFO =
      new ClientCertificates.ClientInfo("k8s", "0.1.0-test");
  static final BigInteger SERIAL = new BigInteger("7255830231907284961");
  static KeyPair keys;

  @BeforeAll
  static void keys() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(3072);
    keys = g.generateKeyPair();
  }

  @Test
  void everyShapeIsTheBytesBouncyCastleWrote() throws Exception {
    ConnectSignature withToken =
        new ConnectSignature("ASIAEXAMPLEKEY", "ab".repeat(32), ISSUED, Optional.of("tok+/=="));
    ConnectSignature longTerm =
        new ConnectSignature("AKIAEXAMPLEKEY", "cd".repeat(32), ISSUED, Optional.empty());
    List<CertificateBuilder.Contents> shapes =
        List.of(
            contents("node-1.ec2.internal", Optional.empty(), Optional.empty()),
            contents(
                "node-1.ec2.internal", Optional.of("fsap-0fedcba9876543210"), Optional.empty()),
            contents("node-1", Optional.of("fsap-0fedcba9876543210"), Optional.of(withToken)),
            contents("node-1", Optional.empty(), Optional.of(longTerm)),
            contents("n".repeat(80), Optional.empty(), Optional.of(withToken)),
            contents("nœud-é", Optional.empty(), Optional.empty()));
    for (CertificateBuilder.Contents c : shapes) {
      X509Certificate ours = CertificateBuilder.build(keys, c, SERIAL);
      assertEquals(
          HexFormat.of().formatHex(bouncyCastle(keys, c, SERIAL).getEncoded()),
          HexFormat.of().formatHex(ours.getEncoded()),
          c.toString());
      ours.verify(keys.getPublic());
    }
  }

  private static CertificateBuilder.Contents contents(
      String cn, Optional<String> ap, Optional<ConnectSignature> auth) {
    return new CertificateBuilder.Contents(cn, "fs-0123456789abcdef0", ap, auth, INFO, ISSUED);
  }

  /** This driver's client certificate as it was written with BouncyCastle. */
  static X509Certificate bouncyCastle(
      KeyPair keys, CertificateBuilder.Contents c, BigInteger serial) throws Exception {
    String cn =
        c.commonName().length() > CertificateBuilder.MAX_COMMON_NAME
            ? c.commonName().substring(0, CertificateBuilder.MAX_COMMON_NAME)
            : c.commonName();
    X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, cn).build();
    SubjectPublicKeyInfo spki = SubjectPublicKeyInfo.getInstance(keys.getPublic().getEncoded());
    X509v3CertificateBuilder b =
        new X509v3CertificateBuilder(
            name,
            serial,
            Date.from(c.issuedAt().minus(CertificateBuilder.NOT_BEFORE)),
            Date.from(c.issuedAt().plus(CertificateBuilder.NOT_AFTER)),
            name,
            spki);
    b.addExtension(
        Extension.subjectKeyIdentifier,
        false,
        new SubjectKeyIdentifier(
            HexFormat.of().parseHex(CertificateBuilder.publicKeyHash(keys.getPublic()))));
    if (c.accessPointId().isPresent()) {
      b.addExtension(
          new ASN1ObjectIdentifier(CertificateBuilder.ACCESS_POINT_OID),
          false,
          new DERUTF8String(c.accessPointId().get()));
    }
    if (c.auth().isPresent()) {
      ConnectSignature s = c.auth().get();
      ASN1EncodableVector v = new ASN1EncodableVector();
      v.add(new DERUTF8String(s.accessKeyId()));
      v.add(new DEROctetString(s.signature().getBytes(StandardCharsets.US_ASCII)));
      v.add(
          new DERUTCTime(
              DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'")
                  .withZone(ZoneOffset.UTC)
                  .format(s.time())));
      s.sessionToken().ifPresent(t -> v.add(new DERTaggedObject(true, 0, new DERUTF8String(t))));
      b.addExtension(
          new ASN1ObjectIdentifier(CertificateBuilder.CLIENT_AUTH_OID), false, new DERSequence(v));
    }
    b.addExtension(
        new ASN1ObjectIdentifier(CertificateBuilder.FILE_SYSTEM_OID),
        false,
        new DERUTF8String(c.fileSystemId()));
    b.addExtension(
        new ASN1ObjectIdentifier(CertificateBuilder.CLIENT_INFO_OID),
        false,
        new DERSequence(
            new ASN1Encodable[] {
              new DERUTF8String(c.clientInfo().source()),
              new DERUTF8String(c.clientInfo().version())
            }));
    return new JcaX509CertificateConverter()
        .getCertificate(
            b.build(new JcaContentSignerBuilder("SHA256withRSA").build(keys.getPrivate())));
  }
}

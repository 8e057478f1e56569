package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.ASN1Sequence;
import org.bouncycastle.asn1.ASN1TaggedObject;
import org.bouncycastle.asn1.ASN1UTCTime;
import org.bouncycastle.asn1.ASN1UTF8String;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

class ClientCertificatesTest {

  static final Instant NOW = Instant.parse("2024-01-15T10:20:30.750Z");
  static final Instant SIGNED = Instant.parse("2024-01-15T10:20:30Z");
  static final String FS = "fs-0123456789abcdef0";
  static final String AP = "fsap-0fedcba9876543210";
  static final String REGION = "us-west-2";
  static final String AKID = "ASIAEXAMPLEKEY";
  static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  static final String TOKEN = "IQoJb3JpZ2luX2VjE+/token==";
  static final ClientCertificates.ClientInfo INFO =
      new ClientCertificates.ClientInfo("k8s", "0.1.0-test");
  static final IamCredentialsSource PROFILE =
      new IamCredentialsSource(Optional.of("team"), Optional.empty(), Optional.empty());

  /** One instance for the whole class: RSA-3072 generation is the slow part. */
  static final ClientCertificates CERTS =
      new ClientCertificates(
          "node-1.ec2.internal",
          INFO,
          s -> StaticCredentialsProvider.create(AwsSessionCredentials.create(AKID, SECRET, TOKEN)),
          () -> NOW);

  @TempDir Path dir;

  @Test
  void iamAndAccessPointCertificateHasEfsUtilsLayout() throws Exception {
    Path mount = dir.resolve("mount-1");
    ClientCertificates.Issued issued =
        CERTS.issue(
            mount, new ClientCertificates.Request(FS, Optional.of(AP), true, PROFILE, REGION));

    X509Certificate cert = parse(issued.certificate());
    assertEquals("CN=node-1.ec2.internal", cert.getSubjectX500Principal().getName());
    assertEquals(cert.getSubjectX500Principal(), cert.getIssuerX500Principal());
    assertEquals(3, cert.getVersion());
    assertEquals("SHA256withRSA", cert.getSigAlgName());
    cert.verify(cert.getPublicKey());
    assertEquals(SIGNED.minus(Duration.ofMinutes(15)), cert.getNotBefore().toInstant());
    assertEquals(SIGNED.plus(Duration.ofHours(3)), cert.getNotAfter().toInstant());
    assertEquals(SIGNED.plus(Duration.ofHours(3)), issued.notAfter());
    assertEquals(SIGNED, issued.issuedAt());
    assertEquals("RSA", cert.getPublicKey().getAlgorithm());
    assertEquals(3072, ((RSAPublicKey) cert.getPublicKey()).getModulus().bitLength());

    X509CertificateHolder holder = new X509CertificateHolder(cert.getEncoded());
    assertEquals(
        List.of(
            "2.5.29.14",
            "1.3.6.1.4.1.4843.7.1",
            "1.3.6.1.4.1.4843.7.2",
            "1.3.6.1.4.1.4843.7.3",
            "1.3.6.1.4.1.4843.7.4"),
        List.of(holder.getExtensions().getExtensionOIDs()).stream().map(Object::toString).toList());
    assertEquals(Set.of(), cert.getCriticalExtensionOIDs());

    byte[] ski =
        new JcaX509ExtensionUtils()
            .createSubjectKeyIdentifier(cert.getPublicKey())
            .getKeyIdentifier();
    assertArrayEquals(
        ski, SubjectKeyIdentifier.getInstance(extension(cert, "2.5.29.14")).getKeyIdentifier());
    assertEquals(AP, utf8(extension(cert, "1.3.6.1.4.1.4843.7.1")));
    assertEquals(FS, utf8(extension(cert, "1.3.6.1.4.1.4843.7.3")));
    ASN1Sequence info = ASN1Sequence.getInstance(extension(cert, "1.3.6.1.4.1.4843.7.4"));
    assertEquals(2, info.size());
    assertEquals("k8s", utf8(info.getObjectAt(0).toASN1Primitive()));
    assertEquals("0.1.0-test", utf8(info.getObjectAt(1).toASN1Primitive()));

    ASN1Sequence auth = ASN1Sequence.getInstance(extension(cert, "1.3.6.1.4.1.4843.7.2"));
    assertEquals(4, auth.size());
    assertEquals(AKID, utf8(auth.getObjectAt(0).toASN1Primitive()));
    String signature =
        new String(
            ASN1OctetString.getInstance(auth.getObjectAt(1)).getOctets(),
            StandardCharsets.US_ASCII);
    assertTrue(signature.matches("[0-9a-f]{64}"), signature);
    ASN1UTCTime sigTime = ASN1UTCTime.getInstance(auth.getObjectAt(2));
    byte[] der = sigTime.getEncoded();
    assertEquals(0x17, der[0], "UTCTime tag");
    assertEquals("240115102030Z", new String(der, 2, der[1], StandardCharsets.US_ASCII));
    ASN1TaggedObject token = ASN1TaggedObject.getInstance(auth.getObjectAt(3));
    assertEquals(0, token.getTagNo());
    assertTrue(token.isExplicit());
    assertEquals(TOKEN, utf8(token.getExplicitBaseObject().toASN1Primitive()));

    // Recompute the embedded signature from the certificate's own key and efs-utils' request.
    String keyHash = HexFormat.of().formatHex(ski);
    String query =
        "Action=Connect&PublicKeyHash="
            + keyHash
            + "&X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential="
            + AKID
            + "%2F20240115%2F"
            + REGION
            + "%2Felasticfilesystem%2Faws4_request"
            + "&X-Amz-Date=20240115T102030Z&X-Amz-Expires=86400"
            + "&X-Amz-Security-Token=IQoJb3JpZ2luX2VjE%2B%2Ftoken%3D%3D"
            + "&X-Amz-SignedHeaders=host";
    String canonical =
        "GET\n/\n"
            + query
            + "\nhost:"
            + FS
            + "\nhost\n"
            + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assertEquals(
        ConnectSignature.signCanonicalRequest(canonical, SECRET, REGION, SIGNED), signature);

    assertKeyMatches(issued.privateKey(), cert);
    assertEquals("rw-------", perms(issued.certificate()));
    assertEquals("rw-------", perms(issued.privateKey()));
    assertEquals("rwx------", perms(mount));
    assertEquals(mount.resolve("certificate.pem"), issued.certificate());
    assertEquals(mount.resolve("privateKey.pem"), issued.privateKey());
  }

  @Test
  void longTermCredentialsHaveNoSessionTokenField() throws Exception {
    var certs =
        new ClientCertificates(
            "n",
            INFO,
            s ->
                StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDEXAMPLE", SECRET)),
            () -> NOW);
    X509Certificate cert = issue(certs, Optional.empty(), true);
    ASN1Sequence auth = ASN1Sequence.getInstance(extension(cert, "1.3.6.1.4.1.4843.7.2"));
    assertEquals(3, auth.size());
    assertEquals("AKIDEXAMPLE", utf8(auth.getObjectAt(0).toASN1Primitive()));
    assertEquals(null, cert.getExtensionValue("1.3.6.1.4.1.4843.7.1"));
  }

  @Test
  void accessPointOnlyCarriesNoCredentialsAndNeverAsksForThem() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    var certs =
        new ClientCertificates(
            "n",
            INFO,
            s -> {
              asked.incrementAndGet();
              throw new IllegalStateException("no credentials here");
            },
            () -> NOW);
    X509Certificate cert = issue(certs, Optional.of(AP), false);

    assertEquals(0, asked.get());
    assertEquals(
        Set.of("2.5.29.14", "1.3.6.1.4.1.4843.7.1", "1.3.6.1.4.1.4843.7.3", "1.3.6.1.4.1.4843.7.4"),
        cert.getNonCriticalExtensionOIDs());
    assertEquals(AP, utf8(extension(cert, "1.3.6.1.4.1.4843.7.1")));
  }

  @Test
  void commonNameIsCutTo64Characters() throws Exception {
    var certs = new ClientCertificates("h".repeat(70), INFO, s -> null, () -> NOW);
    X509Certificate cert = issue(certs, Optional.of(AP), false);
    assertEquals("CN=" + "h".repeat(64), cert.getSubjectX500Principal().getName());
  }

  @Test
  void missingCredentialsAreUnavailableAndNameTheSource() {
    var certs =
        new ClientCertificates(
            "n",
            INFO,
            s -> {
              throw new IllegalStateException("Profile file contained no credentials for 'team'");
            },
            () -> NOW);
    DriverException e =
        assertThrows(
            DriverException.class,
            () ->
                certs.issue(
                    dir,
                    new ClientCertificates.Request(FS, Optional.empty(), true, PROFILE, REGION)));
    assertEquals(DriverException.Kind.UNAVAILABLE, e.kind());
    assertEquals(
        "cannot get IAM credentials for the iam mount of "
            + FS
            + " from awsprofile=team:"
            + " Profile file contained no credentials for 'team'",
        e.getMessage());
    assertFalse(Files.exists(dir.resolve(ClientCertificates.CERTIFICATE_FILE)));
  }

  @Test
  void reissueKeepsTheDirectorysKeyAndReplacesOnlyTheCertificate() throws Exception {
    var request = new ClientCertificates.Request(FS, Optional.of(AP), true, PROFILE, REGION);
    ClientCertificates.Issued first = CERTS.issue(dir, request);
    String key = Files.readString(first.privateKey());
    byte[] cert = Files.readAllBytes(first.certificate());

    ClientCertificates.Issued second = CERTS.issue(dir, request);

    assertEquals(key, Files.readString(second.privateKey()));
    assertFalse(Arrays.equals(cert, Files.readAllBytes(second.certificate())));
    assertKeyMatches(second.privateKey(), parse(second.certificate()));
    try (var files = Files.list(dir)) {
      assertEquals(
          Set.of(ClientCertificates.CERTIFICATE_FILE, ClientCertificates.PRIVATE_KEY_FILE),
          Set.copyOf(files.map(p -> p.getFileName().toString()).toList()),
          "no temporary files left behind");
    }
  }

  @Test
  void aDirectorysOwnKeyIsUsedAndABrokenOneReplaced() throws Exception {
    var request = new ClientCertificates.Request(FS, Optional.of(AP), false, PROFILE, REGION);
    Path other = dir.resolve("other");
    var otherCerts =
        new ClientCertificates("n", INFO, s -> null, () -> NOW); // a different process key
    String otherKey = Files.readString(otherCerts.issue(other, request).privateKey());

    ClientCertificates.Issued reused = CERTS.issue(other, request);
    assertEquals(otherKey, Files.readString(reused.privateKey()));
    assertKeyMatches(reused.privateKey(), parse(reused.certificate()));

    Files.writeString(reused.privateKey(), "-----BEGIN PRIVATE KEY-----\nbroken\n");
    ClientCertificates.Issued repaired = CERTS.issue(other, request);
    assertNotEquals(otherKey, Files.readString(repaired.privateKey()));
    assertKeyMatches(repaired.privateKey(), parse(repaired.certificate()));
  }

  @Test
  void theNodeKeyIsMadeOnceAndReadBackByTheNextPluginStart() throws Exception {
    var request = new ClientCertificates.Request(FS, Optional.empty(), false, PROFILE, REGION);
    Path nodeKey = dir.resolve(ClientCertificates.NODE_KEY_FILE);
    var first = new ClientCertificates("n", INFO, s -> null, () -> NOW, Optional.of(nodeKey));
    first.warmUp();
    assertEquals(
        PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(nodeKey));
    String made = Files.readString(nodeKey);
    String firstMount = Files.readString(first.issue(dir.resolve("a"), request).privateKey());
    assertEquals(made, firstMount, "the node key serves the mounts");

    // the next plugin start: the same key, not a new one
    var next = new ClientCertificates("n", INFO, s -> null, () -> NOW, Optional.of(nodeKey));
    ClientCertificates.Issued issued = next.issue(dir.resolve("b"), request);
    assertEquals(made, Files.readString(issued.privateKey()));
    assertKeyMatches(issued.privateKey(), parse(issued.certificate()));
    assertEquals(made, Files.readString(nodeKey), "read, not rewritten");

    // a broken key file is replaced by a new key, which the mount then uses
    Files.writeString(nodeKey, "-----BEGIN PRIVATE KEY-----\nbroken\n");
    var repaired = new ClientCertificates("n", INFO, s -> null, () -> NOW, Optional.of(nodeKey));
    ClientCertificates.Issued fresh = repaired.issue(dir.resolve("c"), request);
    assertNotEquals(made, Files.readString(fresh.privateKey()));
    assertEquals(Files.readString(nodeKey), Files.readString(fresh.privateKey()));
    assertKeyMatches(fresh.privateKey(), parse(fresh.certificate()));
  }

  @Test
  void aNodeKeyOfAnotherSizeIsReplaced() throws Exception {
    Path nodeKey = dir.resolve(ClientCertificates.NODE_KEY_FILE);
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    PemFiles.writePrivateKey(nodeKey, g.generateKeyPair().getPrivate());
    var certs = new ClientCertificates("n", INFO, s -> null, () -> NOW, Optional.of(nodeKey));
    certs.warmUp();
    KeyPair kept = PemFiles.readRsaKeyPair(nodeKey);
    assertEquals(
        ClientCertificates.RSA_BITS,
        ((RSAPublicKey) kept.getPublic()).getModulus().bitLength(),
        "an RSA-2048 key left by someone else is not used");
  }

  private X509Certificate issue(ClientCertificates certs, Optional<String> ap, boolean iam)
      throws Exception {
    var request =
        new ClientCertificates.Request(FS, ap, iam, IamCredentialsSource.DEFAULT_CHAIN, REGION);
    return parse(certs.issue(dir, request).certificate());
  }

  static X509Certificate parse(Path file) throws Exception {
    try (InputStream in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  static void assertKeyMatches(Path keyFile, X509Certificate cert) throws Exception {
    String pem = Files.readString(keyFile);
    assertTrue(pem.startsWith("-----BEGIN PRIVATE KEY-----\n"), pem);
    byte[] der =
        Base64.getMimeDecoder()
            .decode(
                pem.replace("-----BEGIN PRIVATE KEY-----", "")
                    .replace("-----END PRIVATE KEY-----", ""));
    PrivateKey key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
    Signature s = Signature.getInstance("SHA256withRSA");
    s.initSign(key);
    s.update(new byte[] {1, 2, 3});
    byte[] sig = s.sign();
    s.initVerify(cert.getPublicKey());
    s.update(new byte[] {1, 2, 3});
    assertTrue(s.verify(sig), "private key matches the certificate");
  }

  private static ASN1Primitive extension(X509Certificate cert, String oid) throws Exception {
    byte[] outer = cert.getExtensionValue(oid);
    return ASN1Primitive.fromByteArray(ASN1OctetString.getInstance(outer).getOctets());
  }

  private static String utf8(ASN1Primitive p) {
    return ASN1UTF8String.getInstance(p).getString();
  }

  private static String perms(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }
}

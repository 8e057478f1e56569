package io.efscsi.node.iam;

import static io.efscsi.node.iam.ClientCertificatesTest.AP;
import static io.efscsi.node.iam.ClientCertificatesTest.CERTS;
import static io.efscsi.node.iam.ClientCertificatesTest.FS;
import static io.efscsi.node.iam.ClientCertificatesTest.NOW;
import static io.efscsi.node.iam.ClientCertificatesTest.PROFILE;
import static io.efscsi.node.iam.ClientCertificatesTest.REGION;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertificateAdoptionTest {

  @TempDir Path dir;

  final ClientCertificates.Request apIam =
      new ClientCertificates.Request(FS, Optional.of(AP), true, PROFILE, REGION);

  /** efs-utils' files for a mount: the shared key and the mount's certificate. */
  ClientCertificates.Issued efsUtils(ClientCertificates.Request r) {
    return CERTS.issue(dir.resolve("efs-utils"), r);
  }

  CertificateAdoption.Adopted adopt(java.time.InstantSource clock, ClientCertificates.Issued theirs)
      throws java.io.IOException {
    return new CertificateAdoption(CERTS, clock)
        .adopt(
            dir.resolve("ours"),
            Optional.of(theirs.certificate()),
            Optional.of(theirs.privateKey()),
            apIam);
  }

  @Test
  void aValidCertificateAndItsKeyAreTakenOverAsTheyAre() throws Exception {
    ClientCertificates.Issued theirs = efsUtils(apIam);
    CertificateAdoption.Adopted a = adopt(() -> NOW, theirs);
    assertTrue(a.certificateReused());
    assertTrue(a.keyReused());
    assertEquals(
        PemFiles.readCertificate(theirs.certificate()),
        PemFiles.readCertificate(a.issued().certificate()));
    assertEquals(
        PemFiles.readRsaKeyPair(theirs.privateKey()).getPublic(),
        PemFiles.readRsaKeyPair(a.issued().privateKey()).getPublic());
    assertEquals(theirs.notAfter(), a.issued().notAfter());
    assertEquals(dir.resolve("ours"), a.issued().certificate().getParent());
  }

  @Test
  void aCertificateForAnotherIdentityIsReplacedWithTheSameKey() throws Exception {
    ClientCertificates.Issued theirs =
        efsUtils(new ClientCertificates.Request(FS, Optional.empty(), false, PROFILE, REGION));
    CertificateAdoption.Adopted a = adopt(() -> NOW, theirs);
    assertFalse(a.certificateReused(), "efs-utils' certificate has no access point and no IAM");
    assertTrue(a.keyReused());
    assertNotEquals(
        PemFiles.readCertificate(theirs.certificate()),
        PemFiles.readCertificate(a.issued().certificate()));
    assertEquals(
        PemFiles.readRsaKeyPair(theirs.privateKey()).getPublic(),
        PemFiles.readCertificate(a.issued().certificate()).getPublicKey());
  }

  @Test
  void aCertificateAboutToExpireIsReplaced() throws Exception {
    ClientCertificates.Issued theirs = efsUtils(apIam);
    CertificateAdoption.Adopted a =
        adopt(() -> NOW.plus(Duration.ofHours(3)).minusSeconds(60), theirs);
    assertFalse(a.certificateReused());
    assertTrue(a.keyReused());
  }

  @Test
  void withoutEfsUtilsFilesOursAreIssued() throws Exception {
    Path broken = dir.resolve("privateKey.pem");
    Files.writeString(
        broken, "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n");
    CertificateAdoption.Adopted a =
        new CertificateAdoption(CERTS, () -> NOW)
            .adopt(dir.resolve("ours"), Optional.empty(), Optional.of(broken), apIam);
    assertFalse(a.certificateReused());
    assertFalse(a.keyReused());
    assertTrue(Files.isRegularFile(a.issued().certificate()));
    assertTrue(Files.isRegularFile(a.issued().privateKey()));
  }
}

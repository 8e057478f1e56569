package io.efscsi.node.iam;

import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Instant;

/** What a client certificate file says, for code outside this package (a handback). */
public final class CertificateFiles {

  private CertificateFiles() {}

  /** Whether {@code certificate} is for the key in {@code privateKey} (PKCS#8 PEM). */
  public static boolean certifies(Path certificate, Path privateKey) throws IOException {
    KeyPair keys = PemFiles.readRsaKeyPair(privateKey);
    return PemFiles.readCertificate(certificate).getPublicKey().equals(keys.getPublic());
  }

  /**
   * When the certificate was made: its notBefore plus the 15 minutes efs-utils and this driver
   * back-date it by (efs-utils records this as {@code certificateCreationTime}).
   */
  public static Instant issuedAt(Path certificate) throws IOException {
    X509Certificate cert = PemFiles.readCertificate(certificate);
    return cert.getNotBefore().toInstant().plus(CertificateBuilder.NOT_BEFORE);
  }

  /** When the certificate expires. */
  public static Instant notAfter(Path certificate) throws IOException {
    return PemFiles.readCertificate(certificate).getNotAfter().toInstant();
  }
}

package io.efscsi.node.iam;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes over a client certificate that efs-utils made for a mount: its shared private key and the
 * mount's certificate are copied into one of our certificate directories, so that our renewals
 * (which keep a directory's key) go on presenting the same key and identity. A certificate that is
 * unreadable, does not match the key, names another file system or expires within {@link #MARGIN}
 * is replaced by one of ours at once (with efs-utils' key when that survived).
 */
public final class CertificateAdoption {

  /** A certificate expiring sooner than this is re-issued instead of reused. */
  public static final Duration MARGIN = Duration.ofMinutes(10);

  private static final Logger log = LoggerFactory.getLogger(CertificateAdoption.class);
  private static final String ACCESS_POINT_OID = "1.3.6.1.4.1.4843.7.1";
  private static final String IAM_OID = "1.3.6.1.4.1.4843.7.2";
  private static final String FILE_SYSTEM_OID = "1.3.6.1.4.1.4843.7.3";

  /** The extension is there exactly when expected, and holds the expected text. */
  private static boolean carries(X509Certificate cert, String oid, Optional<String> expected) {
    byte[] v = cert.getExtensionValue(oid);
    if (v == null || expected.isEmpty()) {
      return (v == null) == expected.isEmpty();
    }
    return new String(v, java.nio.charset.StandardCharsets.ISO_8859_1).contains(expected.get());
  }

  /** What was done: the files, and whether efs-utils' certificate and key are the ones in use. */
  public record Adopted(
      ClientCertificates.Issued issued, boolean certificateReused, boolean keyReused) {}

  private final ClientCertificates certificates;
  private final InstantSource clock;

  public CertificateAdoption(ClientCertificates certificates, InstantSource clock) {
    this.certificates = certificates;
    this.clock = clock;
  }

  /**
   * Fills {@code dir} with efs-utils' key and certificate where usable, else ours.
   *
   * @param certificate efs-utils' {@code certificate.pem} for the mount, when it survived
   * @param privateKey efs-utils' shared {@code privateKey.pem}, when it survived
   */
  public Adopted adopt(
      Path dir,
      Optional<Path> certificate,
      Optional<Path> privateKey,
      ClientCertificates.Request request)
      throws IOException {
    Files.createDirectories(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path keyFile = dir.resolve(ClientCertificates.PRIVATE_KEY_FILE);
    Path certFile = dir.resolve(ClientCertificates.CERTIFICATE_FILE);
    Optional<KeyPair> keys = Optional.empty();
    if (privateKey.isPresent()) {
      try {
        keys = Optional.of(PemFiles.readRsaKeyPair(privateKey.get()));
        PemFiles.writePrivateKey(keyFile, keys.get().getPrivate());
      } catch (IOException e) {
        log.warn("efs-utils' private key is not usable, a key of ours is used: {}", e.getMessage());
      }
    }
    if (keys.isPresent() && certificate.isPresent()) {
      Optional<X509Certificate> cert = usable(certificate.get(), keys.get(), request);
      if (cert.isPresent()) {
        PemFiles.writeCertificate(certFile, cert.get());
        Instant notBefore = cert.get().getNotBefore().toInstant();
        return new Adopted(
            new ClientCertificates.Issued(
                certFile,
                keyFile,
                notBefore.plus(CertificateBuilder.NOT_BEFORE),
                cert.get().getNotAfter().toInstant()),
            true,
            true);
      }
    }
    return new Adopted(certificates.issue(dir, request), false, keys.isPresent());
  }

  private Optional<X509Certificate> usable(
      Path file, KeyPair keys, ClientCertificates.Request request) {
    try {
      X509Certificate cert = PemFiles.readCertificate(file);
      if (!cert.getPublicKey().equals(keys.getPublic())) {
        log.warn("efs-utils' certificate {} is not for its key; issuing ours", file);
        return Optional.empty();
      }
      boolean sameIdentity =
          carries(cert, FILE_SYSTEM_OID, Optional.of(request.fileSystemId()))
              && carries(cert, ACCESS_POINT_OID, request.accessPointId())
              && (cert.getExtensionValue(IAM_OID) != null) == request.iam();
      if (!sameIdentity) {
        log.warn(
            "efs-utils' certificate {} is not for {} {} {}; issuing ours",
            file,
            request.fileSystemId(),
            request.accessPointId().orElse("(no access point)"),
            request.iam() ? "with IAM" : "without IAM");
        return Optional.empty();
      }
      if (cert.getNotAfter().toInstant().isBefore(clock.instant().plus(MARGIN))) {
        log.info(
            "efs-utils' certificate {} expires at {}; issuing ours",
            file,
            cert.getNotAfter().toInstant());
        return Optional.empty();
      }
      return Optional.of(cert);
    } catch (IOException e) {
      log.warn("efs-utils' certificate is not usable, issuing ours: {}", e.getMessage());
      return Optional.empty();
    }
  }
}

package io.efscsi.node.iam;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;

/**
 * Writes the TLS client certificate of one mount into a directory, as efs-utils does for every TLS
 * mount: {@value #CERTIFICATE_FILE} (PEM) and {@value #PRIVATE_KEY_FILE} (PKCS#8 PEM), both 0600.
 * The certificate carries the access point id and, for {@code iam}, a SigV4 signature made with the
 * mount's credentials ({@link ConnectSignature}); see {@link CertificateBuilder} for the layout.
 *
 * <p>Keys: like efs-utils' shared {@code privateKey.pem}, one RSA-3072 key serves the new mounts.
 * With a node key file ({@code <state-dir>/}{@value #NODE_KEY_FILE}, 0600) it is made once per node
 * and read back by every later plugin start, as efs-utils makes {@code
 * /etc/amazon/efs/privateKey.pem} once per host: a restarted plugin (after an OOM kill, an upgrade)
 * does not spend a second to minutes of CPU on a new key while its node recovers. Without one (the
 * controller's cleanup mounts, the handback) it is made once per process, on first use. A key file
 * that cannot be read as an RSA-3072 key is replaced, with a warning. A directory that already
 * holds a key keeps it, so a renewal (or a renewal after a plugin restart) only replaces the
 * certificate file and the proxy never sees a certificate and key that do not match.
 */
public final class ClientCertificates {

  private static final Logger log = LoggerFactory.getLogger(ClientCertificates.class);

  public static final String CERTIFICATE_FILE = "certificate.pem";
  public static final String PRIVATE_KEY_FILE = "privateKey.pem";
  static final int RSA_BITS = 3072;

  /** The node key's file name in the state directory. */
  public static final String NODE_KEY_FILE = "client-key.pem";

  /**
   * Client information written into every certificate ({@code 1.3.6.1.4.1.4843.7.4}).
   *
   * @param source efs-utils' {@code [client-info] source}; the Go driver's is {@code k8s}
   * @param version the client version (efs-utils writes its own version)
   */
  public record ClientInfo(String source, String version) {}

  /**
   * What one mount's certificate is for.
   *
   * @param fileSystemId {@code fs-…}
   * @param accessPointId {@code fsap-…} for access point mounts
   * @param iam the certificate carries IAM credentials from {@code credentials}
   * @param credentials where those credentials come from
   * @param region the region the signature is scoped to (the file system's region)
   * @param service the signature's signing name: {@code elasticfilesystem}, or {@code s3files} for
   *     Amazon S3 Files file systems
   */
  public record Request(
      String fileSystemId,
      Optional<String> accessPointId,
      boolean iam,
      IamCredentialsSource credentials,
      String region,
      String service) {

    /** An Amazon EFS mount's request (signing name {@code elasticfilesystem}). */
    public Request(
        String fileSystemId,
        Optional<String> accessPointId,
        boolean iam,
        IamCredentialsSource credentials,
        String region) {
      this(fileSystemId, accessPointId, iam, credentials, region, ConnectSignature.SERVICE);
    }
  }

  /**
   * The files written and the certificate's life.
   *
   * @param certificate the PEM certificate file
   * @param privateKey the PKCS#8 PEM key file
   * @param issuedAt when it was signed (its notBefore is 15 minutes earlier)
   * @param notAfter when it expires
   */
  public record Issued(Path certificate, Path privateKey, Instant issuedAt, Instant notAfter) {}

  private final String commonName;
  private final ClientInfo clientInfo;
  private final CredentialsProviders credentials;
  private final InstantSource clock;
  private final Optional<Path> nodeKeyFile;
  private KeyPair processKey;

  /**
   * Certificates on a key made once per process.
   *
   * @param commonName the subject CN (efs-utils: the host name; cut to 64 characters)
   */
  public ClientCertificates(
      String commonName,
      ClientInfo clientInfo,
      CredentialsProviders credentials,
      InstantSource clock) {
    this(commonName, clientInfo, credentials, clock, Optional.empty());
  }

  /**
   * @param commonName the subject CN (efs-utils: the host name; cut to 64 characters)
   * @param nodeKeyFile where the node's key is kept across plugin starts (made there when missing)
   */
  public ClientCertificates(
      String commonName,
      ClientInfo clientInfo,
      CredentialsProviders credentials,
      InstantSource clock,
      Optional<Path> nodeKeyFile) {
    this.commonName = commonName;
    this.clientInfo = clientInfo;
    this.credentials = credentials;
    this.clock = clock;
    this.nodeKeyFile = nodeKeyFile;
  }

  /**
   * Writes (or replaces) the certificate in {@code dir}, creating the directory (0700) if needed.
   *
   * @throws DriverException UNAVAILABLE when the IAM credentials cannot be had, INTERNAL when the
   *     files cannot be written
   */
  public Issued issue(Path dir, Request request) {
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    Path certFile = dir.resolve(CERTIFICATE_FILE);
    Path keyFile = dir.resolve(PRIVATE_KEY_FILE);
    try {
      Files.createDirectories(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      Optional<KeyPair> existing = existingKey(keyFile);
      KeyPair keys = existing.isPresent() ? existing.get() : processKey();
      Optional<ConnectSignature> auth =
          request.iam()
              ? Optional.of(
                  signature(request, CertificateBuilder.publicKeyHash(keys.getPublic()), now))
              : Optional.empty();
      X509Certificate cert =
          CertificateBuilder.build(
              keys,
              new CertificateBuilder.Contents(
                  commonName,
                  request.fileSystemId(),
                  request.accessPointId(),
                  auth,
                  clientInfo,
                  now));
      if (existing.isEmpty()) {
        PemFiles.writePrivateKey(keyFile, keys.getPrivate());
      }
      PemFiles.writeCertificate(certFile, cert);
      return new Issued(certFile, keyFile, now, cert.getNotAfter().toInstant());
    } catch (IOException | GeneralSecurityException e) {
      throw DriverException.internal(
          "cannot write the TLS client certificate for "
              + request.fileSystemId()
              + " in "
              + dir
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** The directory's key, when it has a readable one (a broken one is replaced, with a warning). */
  private static Optional<KeyPair> existingKey(Path keyFile) {
    if (!Files.exists(keyFile)) {
      return Optional.empty();
    }
    try {
      return Optional.of(PemFiles.readRsaKeyPair(keyFile));
    } catch (IOException e) {
      log.warn("replacing the unreadable client key {}: {}", keyFile, e.getMessage());
      return Optional.empty();
    }
  }

  private ConnectSignature signature(Request r, String publicKeyHash, Instant now) {
    AwsCredentials c;
    try {
      c = credentials.forSource(r.credentials()).resolveCredentials();
    } catch (RuntimeException e) {
      if (e instanceof DriverException d) {
        throw d;
      }
      throw new DriverException(
          DriverException.Kind.UNAVAILABLE,
          "cannot get IAM credentials for the iam mount of "
              + r.fileSystemId()
              + " from "
              + CredentialsProviders.describe(r.credentials())
              + ": "
              + e.getMessage(),
          e);
    }
    Optional<String> token =
        c instanceof AwsSessionCredentials s ? Optional.of(s.sessionToken()) : Optional.empty();
    return ConnectSignature.sign(
        new ConnectSignature.Credentials(c.accessKeyId(), c.secretAccessKey(), token),
        publicKeyHash,
        r.fileSystemId(),
        r.region(),
        now,
        r.service());
  }

  /**
   * Makes the process key now (an RSA key takes a second on a slow node, and much longer under
   * emulation), so the first TLS NodeStage does not wait for it.
   */
  public void warmUp() {
    try {
      processKey();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("RSA key generation is part of every JDK", e);
    }
  }

  private synchronized KeyPair processKey() throws GeneralSecurityException {
    if (processKey == null) {
      processKey = nodeKeyFile.flatMap(ClientCertificates::readNodeKey).orElse(null);
    }
    if (processKey == null) {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(RSA_BITS);
      processKey = g.generateKeyPair();
      if (nodeKeyFile.isPresent()) {
        try {
          PemFiles.writePrivateKey(nodeKeyFile.get(), processKey.getPrivate());
        } catch (IOException e) {
          // the key serves this process all the same; the next start makes another
          log.warn("cannot keep the node's client key in {}: {}", nodeKeyFile.get(), e.toString());
        }
      }
    }
    return processKey;
  }

  /** The node key a previous start wrote, when it is an RSA-3072 key (else it is replaced). */
  private static Optional<KeyPair> readNodeKey(Path file) {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      KeyPair keys = PemFiles.readRsaKeyPair(file);
      int bits = ((java.security.interfaces.RSAKey) keys.getPrivate()).getModulus().bitLength();
      if (bits != RSA_BITS) {
        log.warn("replacing the node's client key {}: RSA-{}, not RSA-{}", file, bits, RSA_BITS);
        return Optional.empty();
      }
      return Optional.of(keys);
    } catch (IOException e) {
      log.warn("replacing the node's unreadable client key {}: {}", file, e.getMessage());
      return Optional.empty();
    }
  }
}

package io.efscsi.node.iam;

import io.efscsi.common.BuildInfo;
import io.efscsi.node.volume.MountPlan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client certificates issued in-process, one directory per proxy key under the supervisor's
 * certificate directory; renewed in the background when a renewer is given (the node's proxies live
 * for days; the controller's cleanup mounts for minutes).
 */
public final class IssuedCertificates implements ClientCertificateSource {

  private static final Logger LOG = LoggerFactory.getLogger(IssuedCertificates.class);

  private final ClientCertificates certificates;
  private final Optional<CertificateRenewer> renewer;
  private final String region;

  IssuedCertificates(
      ClientCertificates certificates, Optional<CertificateRenewer> renewer, String region) {
    this.certificates = certificates;
    this.renewer = renewer;
    this.region = region;
  }

  @Override
  public Optional<Files> forPlan(MountPlan plan, Path dir) {
    if (!plan.tls()) {
      return Optional.empty();
    }
    ClientCertificates.Request request =
        new ClientCertificates.Request(
            plan.fileSystemId(),
            plan.accessPointId(),
            plan.iam(),
            plan.credentials(),
            region,
            plan.signingName());
    Path keyDir = dir.resolve(digest(plan.proxyKey()));
    ClientCertificates.Issued issued = certificates.issue(keyDir, request);
    if (renewer.isPresent()) {
      saveRequest(keyDir, request);
      renewer.get().track(keyDir, request);
    }
    return Optional.of(new Files(issued.certificate(), issued.privateKey()));
  }

  /**
   * After a restart of the plugin: renews again the certificates of the proxies it adopted (kubelet
   * does not stage a staged volume again, so {@link #forPlan} is not called for them, and their
   * certificates would expire three hours after their last renewal).
   *
   * @return how many were resumed
   */
  int resume(Path dir, java.util.Collection<String> proxyKeys) {
    int resumed = 0;
    for (String key : proxyKeys) {
      Path keyDir = dir.resolve(digest(key));
      Path saved = keyDir.resolve(REQUEST_FILE);
      if (renewer.isEmpty() || !java.nio.file.Files.isRegularFile(saved)) {
        continue;
      }
      try {
        renewer.get().track(keyDir, loadRequest(saved));
        resumed++;
      } catch (IOException | RuntimeException e) {
        LOG.error(
            "cannot renew the client certificate in {} any more ({}): its proxy's new TLS"
                + " connections fail once it expires; unstage and stage the volume again",
            keyDir,
            e.getMessage());
      }
    }
    return resumed;
  }

  /** What a renewal needs, beside the certificate: {@link ClientCertificates.Request}. */
  public static final String REQUEST_FILE = "request.properties";

  /** Saves {@code r} in {@code keyDir}, where {@link #loadRequest} reads it (best effort). */
  public static void saveRequest(Path keyDir, ClientCertificates.Request r) {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("fileSystemId", r.fileSystemId());
    r.accessPointId().ifPresent(v -> p.setProperty("accessPointId", v));
    p.setProperty("iam", Boolean.toString(r.iam()));
    r.credentials().awsProfile().ifPresent(v -> p.setProperty("awsProfile", v));
    r.credentials().roleArn().ifPresent(v -> p.setProperty("roleArn", v));
    r.credentials().jwtPath().ifPresent(v -> p.setProperty("jwtPath", v));
    p.setProperty("region", r.region());
    p.setProperty("service", r.service());
    Path tmp = keyDir.resolve(REQUEST_FILE + ".tmp");
    try (var out = java.nio.file.Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      p.store(out, "what renews this client certificate (efs-csi node plugin)");
      out.close();
      java.nio.file.Files.move(
          tmp,
          keyDir.resolve(REQUEST_FILE),
          java.nio.file.StandardCopyOption.ATOMIC_MOVE,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      LOG.warn(
          "cannot record how to renew {} ({}): after a plugin restart it is not renewed",
          keyDir,
          e.getMessage());
    }
  }

  public static ClientCertificates.Request loadRequest(Path saved) throws IOException {
    java.util.Properties p = new java.util.Properties();
    try (var in = java.nio.file.Files.newBufferedReader(saved, StandardCharsets.UTF_8)) {
      p.load(in);
    }
    String fs = p.getProperty("fileSystemId");
    String region = p.getProperty("region");
    if (fs == null || region == null) {
      throw new IOException(saved + " lacks fileSystemId or region");
    }
    return new ClientCertificates.Request(
        fs,
        Optional.ofNullable(p.getProperty("accessPointId")),
        Boolean.parseBoolean(p.getProperty("iam")),
        new io.efscsi.node.volume.MountPlan.IamCredentialsSource(
            Optional.ofNullable(p.getProperty("awsProfile")),
            Optional.ofNullable(p.getProperty("roleArn")),
            Optional.ofNullable(p.getProperty("jwtPath"))),
        region,
        // a record written before S3 Files support is an EFS mount's
        p.getProperty("service", "elasticfilesystem"));
  }

  @Override
  public void forget(String proxyKey, Path dir) {
    Path keyDir = dir.resolve(digest(proxyKey));
    renewer.ifPresent(r -> r.untrack(keyDir));
    try {
      for (String f :
          new String[] {
            ClientCertificates.CERTIFICATE_FILE, ClientCertificates.PRIVATE_KEY_FILE, REQUEST_FILE
          }) {
        java.nio.file.Files.deleteIfExists(keyDir.resolve(f));
      }
      java.nio.file.Files.deleteIfExists(keyDir);
    } catch (IOException e) {
      LOG.warn("cannot remove the certificate directory {}: {}", keyDir, e.getMessage());
    }
  }

  private static String digest(String key) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Certificates of {@code region} on {@code credentials}, never renewed (for mounts that live
   * minutes: the controller's cleanup mounts).
   */
  public static ClientCertificateSource unrenewed(
      CredentialsProviders credentials, String region, InstantSource clock) {
    return new IssuedCertificates(issuer(credentials, clock), Optional.empty(), region);
  }

  /** The issuer of this driver's certificates: efs-utils' common name, our client info. */
  public static ClientCertificates issuer(CredentialsProviders credentials, InstantSource clock) {
    return issuer(credentials, clock, Optional.empty());
  }

  /** The node's issuer, its key kept in {@code nodeKeyFile} across plugin starts. */
  public static ClientCertificates issuer(
      CredentialsProviders credentials, InstantSource clock, Optional<Path> nodeKeyFile) {
    return new ClientCertificates(
        commonName(),
        new ClientCertificates.ClientInfo("k8s", BuildInfo.load().version()),
        credentials,
        clock,
        nodeKeyFile);
  }

  /** efs-utils uses the host name (at most 64 characters) as the certificate's common name. */
  public static String commonName() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "efs-csi-node";
    }
    return host.length() > 64 ? host.substring(0, 64) : host;
  }
}

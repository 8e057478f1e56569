package io.efscsi.node;

import io.efscsi.node.iam.CertificateRenewer;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.volume.MountPlan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client certificates issued in-process, one directory per proxy key under the supervisor's
 * certificate directory; renewed in the background when a renewer is given (the node's proxies live
 * for days; the controller's cleanup mounts for minutes).
 */
final class IssuedCertificates implements ClientCertificateSource {

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
            plan.fileSystemId(), plan.accessPointId(), plan.iam(), plan.credentials(), region);
    Path keyDir = dir.resolve(digest(plan.proxyKey()));
    ClientCertificates.Issued issued = certificates.issue(keyDir, request);
    renewer.ifPresent(r -> r.track(keyDir, request));
    return Optional.of(new Files(issued.certificate(), issued.privateKey()));
  }

  @Override
  public void forget(String proxyKey, Path dir) {
    Path keyDir = dir.resolve(digest(proxyKey));
    renewer.ifPresent(r -> r.untrack(keyDir));
    try {
      for (String f :
          new String[] {ClientCertificates.CERTIFICATE_FILE, ClientCertificates.PRIVATE_KEY_FILE}) {
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

  /** efs-utils uses the host name (at most 64 characters) as the certificate's common name. */
  static String commonName() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "efs-csi-node";
    }
    return host.length() > 64 ? host.substring(0, 64) : host;
  }
}

package io.efscsi.node.takeover;

import io.efscsi.node.iam.CertificateAdoption;
import io.efscsi.node.iam.CertificateRenewer;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.iam.ClientCertificates;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real {@link TakeoverCertificates}: efs-utils' key and certificate copied into {@code
 * efs-utils-<port>} under our certificate dir when usable (else ours), then renewed by our renewer
 * as efs-utils' watchdog did, with the same key, access point and IAM identity.
 */
public final class AdoptedCertificates implements TakeoverCertificates {

  private static final Logger LOG = LoggerFactory.getLogger(AdoptedCertificates.class);

  /** Where the certificate dirs go (the supervisor's certificate dir). */
  @FunctionalInterface
  public interface Root {
    Path get() throws IOException;
  }

  private final CertificateAdoption adoption;
  private final Optional<CertificateRenewer> renewer;
  private final Root root;

  public AdoptedCertificates(
      CertificateAdoption adoption, Optional<CertificateRenewer> renewer, Root root) {
    this.adoption = adoption;
    this.renewer = renewer;
    this.root = root;
  }

  @Override
  public ClientCertificateSource.Files prepare(TakeoverPlan plan, TakeoverPlan.Certificate spec)
      throws IOException {
    Path dir = root.get().resolve("efs-utils-" + plan.port());
    ClientCertificates.Request request = request(spec);
    CertificateAdoption.Adopted a =
        adoption.adopt(dir, spec.efsUtilsCertificate(), spec.efsUtilsKey(), request);
    renewer.ifPresent(r -> r.track(dir, request));
    LOG.info(
        "port {}: {} certificate and {} key in {} (valid until {})",
        plan.port(),
        a.certificateReused() ? "efs-utils'" : "our",
        a.keyReused() ? "efs-utils'" : "our",
        dir,
        a.issued().notAfter());
    return new ClientCertificateSource.Files(a.issued().certificate(), a.issued().privateKey());
  }

  @Override
  public void resume(TakeoverPlan plan, TakeoverPlan.Certificate spec) {
    try {
      Path dir = root.get().resolve("efs-utils-" + plan.port());
      renewer.ifPresent(r -> r.track(dir, request(spec)));
    } catch (IOException e) {
      LOG.warn("cannot renew the certificate of port {}: {}", plan.port(), e.getMessage());
    }
  }

  private static ClientCertificates.Request request(TakeoverPlan.Certificate spec) {
    return new ClientCertificates.Request(
        spec.fileSystemId(), spec.accessPointId(), spec.iam(), spec.credentials(), spec.region());
  }

  @Override
  public void forget(int port) {
    try {
      Path dir = root.get().resolve("efs-utils-" + port);
      renewer.ifPresent(r -> r.untrack(dir));
      Files.deleteIfExists(dir.resolve(ClientCertificates.CERTIFICATE_FILE));
      Files.deleteIfExists(dir.resolve(ClientCertificates.PRIVATE_KEY_FILE));
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      LOG.warn("cannot remove the certificate of taken-over port {}: {}", port, e.getMessage());
    }
  }
}

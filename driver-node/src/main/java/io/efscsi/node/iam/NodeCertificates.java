package io.efscsi.node.iam;

import io.efscsi.node.volume.MountPlan;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Collection;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's TLS client certificates, one directory per proxy key, renewed in the background. They
 * are signed with the IAM credentials of the node's region, so they are set up once the region is
 * known ({@link #prepare}, which the node calls as soon as its metadata is resolved; any use before
 * does it first).
 */
public final class NodeCertificates implements ClientCertificateSource, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeCertificates.class);

  /** What is made once the region is known. */
  private record Prepared(
      String region,
      SdkCredentialsProviders credentials,
      ClientCertificates certificates,
      CertificateRenewer renewer) {}

  private final Supplier<String> region;
  private final Function<String, SdkCredentialsProviders> credentials;
  private final InstantSource clock;
  private final Optional<Path> nodeKeyFile;
  private volatile Prepared prepared;

  /**
   * @param region the node's region (resolving the node metadata; throws while it is unknown)
   * @param credentials the IAM credentials of a region; asked once, when the region is known
   * @param clock for the certificates' validity
   * @param nodeKeyFile where the node's client key is kept across plugin starts ({@link
   *     ClientCertificates})
   */
  public NodeCertificates(
      Supplier<String> region,
      Function<String, SdkCredentialsProviders> credentials,
      InstantSource clock,
      Optional<Path> nodeKeyFile) {
    this.region = region;
    this.credentials = credentials;
    this.clock = clock;
    this.nodeKeyFile = nodeKeyFile;
  }

  /** Sets up the certificates of the node's region (once): starts renewing, warms up the key. */
  public void prepare() {
    prepared();
  }

  private synchronized Prepared prepared() {
    if (prepared == null) {
      String r = region.get();
      SdkCredentialsProviders c = credentials.apply(r);
      ClientCertificates certificates = IssuedCertificates.issuer(c, clock, nodeKeyFile);
      CertificateRenewer renewer = new CertificateRenewer(certificates, clock);
      renewer.start();
      Thread.ofVirtual().name("client-key").start(certificates::warmUp);
      prepared = new Prepared(r, c, certificates, renewer);
    }
    return prepared;
  }

  @Override
  public Optional<Files> forPlan(MountPlan plan, Path dir) {
    if (!plan.tls()) {
      return Optional.empty();
    }
    return issued(prepared()).forPlan(plan, dir);
  }

  @Override
  public void forget(String proxyKey, Path dir) {
    Optional<Prepared> p = Optional.ofNullable(prepared);
    new IssuedCertificates(p.map(Prepared::certificates).orElse(null), p.map(Prepared::renewer), "")
        .forget(proxyKey, dir);
  }

  /**
   * Renews again the certificates of the adopted proxies with these keys (after a plugin restart).
   */
  public void resumeRenewals(Path certificateDir, Collection<String> proxyKeys) {
    int n = issued(prepared()).resume(certificateDir, proxyKeys);
    if (n > 0) {
      LOG.info("renewing the client certificates of {} adopted proxies again", n);
    }
  }

  /** Adopts the certificates of taken-over mounts (efs-utils' key, else ours). */
  public CertificateAdoption adoption() {
    return new CertificateAdoption(prepared().certificates(), clock);
  }

  /** Renews the certificates of taken-over mounts too. */
  public CertificateRenewer renewer() {
    return prepared().renewer();
  }

  private static IssuedCertificates issued(Prepared p) {
    return new IssuedCertificates(p.certificates(), Optional.of(p.renewer()), p.region());
  }

  @Override
  public void close() {
    Prepared p = prepared;
    if (p != null) {
      p.renewer().close();
      p.credentials().close();
    }
  }
}

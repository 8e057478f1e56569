package io.efscsi.node;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.cloud.NodeMetadata;
import io.efscsi.node.cloud.NodeMetadataChain;
import io.efscsi.node.iam.CertificateAdoption;
import io.efscsi.node.iam.CertificateRenewer;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.SdkCredentialsProviders;
import io.efscsi.node.takeover.AdoptedCertificates;
import io.efscsi.node.takeover.TakeoverCertificates;
import io.efscsi.node.volume.MountPlan;
import io.grpc.Context;
import io.grpc.Deadline;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * The node's cloud-facing parts: its metadata (from the chain it is given: IMDS, else the Node
 * object, else the environment) and, once the region is known, the TLS client certificates of the
 * proxies (with renewal) on that region's IAM credentials.
 */
final class NodeCloud implements AutoCloseable {

  /** The longest a call waits for the metadata when its gRPC deadline allows more. */
  static final Duration METADATA_WAIT = Duration.ofSeconds(60);

  /** What a call's deadline keeps for the answer itself after waiting for the metadata. */
  private static final Duration ANSWER_MARGIN = Duration.ofMillis(500);

  /** What is known once the metadata is: the region's credentials, certificates and renewer. */
  private record Resolved(
      NodeMetadata metadata,
      SdkCredentialsProviders credentials,
      ClientCertificates certificates,
      CertificateRenewer renewer) {}

  private final NodeMetadataChain chain;
  private final Function<String, SdkCredentialsProviders> credentials;
  private final InstantSource clock;
  private final CountDownLatch known = new CountDownLatch(1);
  private volatile String lastFailure;
  private volatile Resolved resolved;

  /**
   * @param chain the metadata sources, one chain for the process (each source's failure is logged
   *     once, not at every retry)
   * @param credentials the IAM credentials of a region; asked once, when the region is known
   * @param clock for the certificates' validity
   */
  NodeCloud(
      NodeMetadataChain chain,
      Function<String, SdkCredentialsProviders> credentials,
      InstantSource clock) {
    this.chain = chain;
    this.credentials = credentials;
    this.clock = clock;
  }

  /**
   * Resolves the metadata (blocking, about a second at worst); throws when no source answers, and
   * remembers why for the calls that wait on it.
   */
  void resolveMetadata() {
    resolved();
  }

  private synchronized Resolved resolved() {
    if (resolved == null) {
      NodeMetadata m;
      try {
        m = chain.resolve();
      } catch (RuntimeException e) {
        lastFailure = e.getMessage();
        throw e;
      }
      SdkCredentialsProviders c = credentials.apply(m.region());
      ClientCertificates certificates = IssuedCertificates.issuer(c, clock);
      CertificateRenewer renewer = new CertificateRenewer(certificates, clock);
      renewer.start();
      Thread.ofVirtual().name("client-key").start(certificates::warmUp);
      resolved = new Resolved(m, c, certificates, renewer);
      known.countDown();
    }
    return resolved;
  }

  /**
   * The node metadata, resolved in the background. A call that comes before it is known (kubelet
   * registers the driver the moment its socket appears) waits for it within the call's deadline, at
   * most {@link #METADATA_WAIT}, then answers UNAVAILABLE with the reason it is still unknown.
   */
  NodeMetadata metadata() {
    return new NodeMetadata() {
      private NodeMetadata get() {
        Resolved r = resolved;
        if (r == null && awaitMetadata(waitBudget(Context.current().getDeadline()))) {
          r = resolved;
        }
        if (r == null) {
          String why = lastFailure;
          throw DriverException.unavailable(
              "the node plugin is starting: its node metadata is not known yet%s",
              why == null ? " (still resolving)" : ": " + why);
        }
        return r.metadata();
      }

      @Override
      public String nodeId() {
        return get().nodeId();
      }

      @Override
      public String region() {
        return get().region();
      }

      @Override
      public Optional<String> availabilityZone() {
        return get().availabilityZone();
      }

      @Override
      public Optional<String> availabilityZoneId() {
        return get().availabilityZoneId();
      }
    };
  }

  /** How long a call with {@code deadline} (null: none) may wait for the metadata. */
  static Duration waitBudget(Deadline deadline) {
    if (deadline == null) {
      return METADATA_WAIT;
    }
    long left = deadline.timeRemaining(TimeUnit.MILLISECONDS) - ANSWER_MARGIN.toMillis();
    return Duration.ofMillis(Math.max(0, Math.min(left, METADATA_WAIT.toMillis())));
  }

  private boolean awaitMetadata(Duration wait) {
    try {
      return known.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Certificates for TLS mounts, one directory per proxy key, renewed in the background. */
  ClientCertificateSource certificates() {
    return new ClientCertificateSource() {
      @Override
      public Optional<Files> forPlan(MountPlan plan, Path dir) {
        if (!plan.tls()) {
          return Optional.empty();
        }
        return issued(resolved()).forPlan(plan, dir);
      }

      @Override
      public void forget(String proxyKey, Path dir) {
        Optional<Resolved> r = Optional.ofNullable(resolved);
        new IssuedCertificates(
                r.map(Resolved::certificates).orElse(null), r.map(Resolved::renewer), "")
            .forget(proxyKey, dir);
      }
    };
  }

  /** Certificates of taken-over mounts (the metadata is resolved first). */
  TakeoverCertificates takeoverCertificates(AdoptedCertificates.Root root) {
    Resolved r = resolved();
    return new AdoptedCertificates(
        new CertificateAdoption(r.certificates(), clock), Optional.of(r.renewer()), root);
  }

  /**
   * Renews again the certificates of the adopted proxies with these keys (after a plugin restart).
   */
  void resumeRenewals(Path certificateDir, Collection<String> proxyKeys) {
    int n = issued(resolved()).resume(certificateDir, proxyKeys);
    if (n > 0) {
      LoggerFactory.getLogger(NodeCloud.class)
          .info("renewing the client certificates of {} adopted proxies again", n);
    }
  }

  private static IssuedCertificates issued(Resolved r) {
    return new IssuedCertificates(
        r.certificates(), Optional.of(r.renewer()), r.metadata().region());
  }

  @Override
  public void close() {
    Resolved r = resolved;
    if (r != null) {
      r.renewer().close();
      r.credentials().close();
    }
  }
}

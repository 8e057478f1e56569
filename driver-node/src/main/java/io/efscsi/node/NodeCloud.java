package io.efscsi.node;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.error.DriverException;
import io.efscsi.node.cloud.NodeMetadata;
import io.efscsi.node.cloud.NodeMetadataChain;
import io.efscsi.node.iam.CertificateRenewer;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.SdkCredentialsProviders;
import io.efscsi.node.k8s.NotReadyTaintRemover;
import io.efscsi.node.volume.MountPlan;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The node's cloud-facing parts: its metadata (IMDS, else the Node object, else the environment),
 * the TLS client certificates of the proxies (with renewal), and the startup taint's removal. The
 * Kubernetes API is used only inside a cluster ({@code KUBERNETES_SERVICE_HOST} set).
 */
final class NodeCloud implements AutoCloseable {

  private final Map<String, String> env;
  private volatile NodeMetadata metadata;
  private volatile SdkCredentialsProviders credentials;
  private volatile CertificateRenewer renewer;
  private volatile ClientCertificates certificates;
  private volatile NotReadyTaintRemover taint;

  NodeCloud(Map<String, String> env) {
    this.env = env;
  }

  private Supplier<KubernetesClient> kubernetes() {
    return () -> {
      if (!env.containsKey("KUBERNETES_SERVICE_HOST")) {
        throw new KubernetesClientException(
            "not running inside a Kubernetes cluster (KUBERNETES_SERVICE_HOST is not set)");
      }
      return new KubernetesClientBuilder().build();
    };
  }

  /** Resolves the metadata (blocking, about a second at worst); throws when no source answers. */
  void resolveMetadata() {
    if (metadata == null) {
      NodeMetadata m = NodeMetadataChain.standard(env, kubernetes()).resolve();
      credentials = new SdkCredentialsProviders(m.region());
      certificates =
          new ClientCertificates(
              IssuedCertificates.commonName(),
              new ClientCertificates.ClientInfo("k8s", BuildInfo.load().version()),
              credentials,
              InstantSource.system());
      renewer = new CertificateRenewer(certificates, InstantSource.system());
      renewer.start();
      ClientCertificates c = certificates;
      Thread.ofVirtual().name("client-key").start(c::warmUp);
      metadata = m;
    }
  }

  /** Starts removing the agent-not-ready taint once the kubelet registered the driver. */
  void startTaintRemover() {
    if (!env.containsKey("KUBERNETES_SERVICE_HOST")) {
      return;
    }
    NotReadyTaintRemover.nodeToWatch(env)
        .ifPresent(node -> {
          taint =
              new NotReadyTaintRemover(
                  new KubernetesClientBuilder().build(),
                  node,
                  NotReadyTaintRemover.Backoff.DEFAULT);
          taint.start();
        });
  }

  /** The node metadata, resolved lazily: UNAVAILABLE until {@link #resolveMetadata} succeeded. */
  NodeMetadata metadata() {
    return new NodeMetadata() {
      private NodeMetadata get() {
        NodeMetadata m = metadata;
        if (m == null) {
          throw DriverException.unavailable(
              "the node plugin is starting: its node metadata is not known yet");
        }
        return m;
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

  /** Certificates for TLS mounts, one directory per proxy key, renewed in the background. */
  ClientCertificateSource certificates() {
    return new ClientCertificateSource() {
      @Override
      public Optional<Files> forPlan(MountPlan plan, Path dir) {
        if (!plan.tls()) {
          return Optional.empty();
        }
        resolveMetadata();
        return issued().forPlan(plan, dir);
      }

      @Override
      public void forget(String proxyKey, Path dir) {
        new IssuedCertificates(certificates, Optional.ofNullable(renewer), "")
            .forget(proxyKey, dir);
      }
    };
  }

  /** Certificates of taken-over mounts (after {@link #resolveMetadata}). */
  io.efscsi.node.takeover.TakeoverCertificates takeoverCertificates(
      io.efscsi.node.takeover.AdoptedCertificates.Root root) {
    resolveMetadata();
    return new io.efscsi.node.takeover.AdoptedCertificates(
        new io.efscsi.node.iam.CertificateAdoption(certificates, InstantSource.system()),
        Optional.of(renewer),
        root);
  }

  private IssuedCertificates issued() {
    return new IssuedCertificates(certificates, Optional.of(renewer), metadata.region());
  }

  @Override
  public void close() {
    if (taint != null) {
      taint.close();
    }
    if (renewer != null) {
      renewer.close();
    }
    if (credentials != null) {
      credentials.close();
    }
  }
}

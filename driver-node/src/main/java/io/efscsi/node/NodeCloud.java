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
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's cloud-facing parts: its metadata (IMDS, else the Node object, else the environment),
 * the TLS client certificates of the proxies (with renewal), and the startup taint's removal. The
 * Kubernetes API is used only inside a cluster ({@code KUBERNETES_SERVICE_HOST} set).
 */
final class NodeCloud implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeCloud.class);

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
              commonName(),
              new ClientCertificates.ClientInfo("k8s", BuildInfo.load().version()),
              credentials,
              InstantSource.system());
      renewer = new CertificateRenewer(certificates, InstantSource.system());
      renewer.start();
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
        ClientCertificates.Request request =
            new ClientCertificates.Request(
                plan.fileSystemId(),
                plan.accessPointId(),
                plan.iam(),
                plan.credentials(),
                metadata.region());
        Path keyDir = dir.resolve(digest(plan.proxyKey()));
        ClientCertificates.Issued issued = certificates.issue(keyDir, request);
        renewer.track(keyDir, request);
        return Optional.of(new Files(issued.certificate(), issued.privateKey()));
      }

      @Override
      public void forget(String proxyKey, Path dir) {
        Path keyDir = dir.resolve(digest(proxyKey));
        CertificateRenewer r = renewer;
        if (r != null) {
          r.untrack(keyDir);
        }
        try {
          for (String f :
              new String[] {
                ClientCertificates.CERTIFICATE_FILE, ClientCertificates.PRIVATE_KEY_FILE
              }) {
            java.nio.file.Files.deleteIfExists(keyDir.resolve(f));
          }
          java.nio.file.Files.deleteIfExists(keyDir);
        } catch (IOException e) {
          LOG.warn("cannot remove the certificate directory {}: {}", keyDir, e.getMessage());
        }
      }
    };
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
  private static String commonName() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "efs-csi-node";
    }
    return host.length() > 64 ? host.substring(0, 64) : host;
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

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
import io.grpc.Context;
import io.grpc.Deadline;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The node's cloud-facing parts: its metadata (IMDS, else the Node object, else the environment),
 * the TLS client certificates of the proxies (with renewal), and the startup taint's removal. The
 * Kubernetes API is used only inside a cluster ({@code KUBERNETES_SERVICE_HOST} set).
 */
final class NodeCloud implements AutoCloseable {

  /** The longest a call waits for the metadata when its gRPC deadline allows more. */
  static final Duration METADATA_WAIT = Duration.ofSeconds(60);

  /** What a call's deadline keeps for the answer itself after waiting for the metadata. */
  private static final Duration ANSWER_MARGIN = Duration.ofMillis(500);

  private final Map<String, String> env;
  private final CountDownLatch known = new CountDownLatch(1);
  private volatile NodeMetadataChain chain;
  private volatile String lastFailure;
  private volatile NodeMetadata metadata;
  private volatile SdkCredentialsProviders credentials;
  private volatile CertificateRenewer renewer;
  private volatile ClientCertificates certificates;
  private volatile NotReadyTaintRemover taint;
  private KubernetesClient eventsClient;
  private final io.efscsi.node.events.PublishedPods publishedPods;

  /**
   * @param publishedPods the pods NodePublishVolume named (events go on them)
   */
  NodeCloud(Map<String, String> env, io.efscsi.node.events.PublishedPods publishedPods) {
    this.env = env;
    this.publishedPods = publishedPods;
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

  /**
   * Resolves the metadata (blocking, about a second at worst); throws when no source answers, and
   * remembers why for the calls that wait on it. One chain for the process, so that each source's
   * failure is logged once, not at every retry.
   */
  synchronized void resolveMetadata() {
    if (metadata == null) {
      if (chain == null) {
        chain = NodeMetadataChain.standard(env, kubernetes());
      }
      NodeMetadata m;
      try {
        m = chain.resolve();
      } catch (RuntimeException e) {
        lastFailure = e.getMessage();
        throw e;
      }
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
      known.countDown();
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

  /**
   * The node metadata, resolved in the background. A call that comes before it is known (kubelet
   * registers the driver the moment its socket appears) waits for it within the call's deadline, at
   * most {@link #METADATA_WAIT}, then answers UNAVAILABLE with the reason it is still unknown.
   */
  NodeMetadata metadata() {
    return new NodeMetadata() {
      private NodeMetadata get() {
        NodeMetadata m = metadata;
        if (m == null && awaitMetadata(waitBudget(Context.current().getDeadline()))) {
          m = metadata;
        }
        if (m == null) {
          String why = lastFailure;
          throw DriverException.unavailable(
              "the node plugin is starting: its node metadata is not known yet%s",
              why == null ? " (still resolving)" : ": " + why);
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

  /**
   * Where takeover news goes: the log, and Events (on the pods, else the Node) when the plugin runs
   * in a cluster ({@code KUBERNETES_SERVICE_HOST} and {@code CSI_NODE_NAME} set).
   */
  io.efscsi.node.takeover.TakeoverEvents takeoverEvents() {
    return events()
        .<io.efscsi.node.takeover.TakeoverEvents>map(io.efscsi.node.takeover.PodTakeoverEvents::new)
        .orElse(io.efscsi.node.takeover.TakeoverEvents.LOG);
  }

  /** Kubernetes Events, when running in a cluster with the node's name known; one for all. */
  synchronized java.util.Optional<io.efscsi.node.events.PodEvents> events() {
    String node = env.getOrDefault("CSI_NODE_NAME", "").strip();
    if (!env.containsKey("KUBERNETES_SERVICE_HOST") || node.isEmpty()) {
      return java.util.Optional.empty();
    }
    if (events == null) {
      events =
          new io.efscsi.node.events.PodEvents(
              new io.efscsi.node.events.KubernetesEventApi(this::eventsClient),
              publishedPods,
              node,
              java.time.Clock.systemUTC());
    }
    return java.util.Optional.of(events);
  }

  private io.efscsi.node.events.PodEvents events;

  private synchronized KubernetesClient eventsClient() {
    if (eventsClient == null) {
      eventsClient = kubernetes().get();
    }
    return eventsClient;
  }

  /**
   * Renews again the certificates of the adopted proxies with these keys (after a plugin restart).
   */
  void resumeRenewals(Path certificateDir, java.util.Collection<String> proxyKeys) {
    resolveMetadata();
    int n = issued().resume(certificateDir, proxyKeys);
    if (n > 0) {
      org.slf4j.LoggerFactory.getLogger(NodeCloud.class)
          .info("renewing the client certificates of {} adopted proxies again", n);
    }
  }

  private IssuedCertificates issued() {
    return new IssuedCertificates(certificates, Optional.of(renewer), metadata.region());
  }

  @Override
  public void close() {
    if (taint != null) {
      taint.close();
    }
    synchronized (this) {
      if (eventsClient != null) {
        eventsClient.close();
      }
    }
    if (renewer != null) {
      renewer.close();
    }
    if (credentials != null) {
      credentials.close();
    }
  }
}

package io.efscsi.node.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The node plugin's one Kubernetes client (node metadata, events, the startup taint), built by
 * {@code build} at its first use and only inside a cluster ({@code KUBERNETES_SERVICE_HOST} set);
 * closed with this.
 */
public final class InClusterClient implements Supplier<KubernetesClient>, AutoCloseable {

  private final Map<String, String> env;
  private final Supplier<KubernetesClient> build;
  private KubernetesClient client;

  /**
   * @param env the process environment
   * @param build makes the real client (the composition root's {@code KubernetesClientBuilder})
   */
  public InClusterClient(Map<String, String> env, Supplier<KubernetesClient> build) {
    this.env = env;
    this.build = build;
  }

  /** Whether the plugin runs inside a cluster, so that the client can be built. */
  public boolean inCluster() {
    return env.containsKey("KUBERNETES_SERVICE_HOST");
  }

  /**
   * The client, built at the first call.
   *
   * @throws KubernetesClientException outside a cluster
   */
  @Override
  public synchronized KubernetesClient get() {
    if (!inCluster()) {
      throw new KubernetesClientException(
          "not running inside a Kubernetes cluster (KUBERNETES_SERVICE_HOST is not set)");
    }
    if (client == null) {
      client = build.get();
    }
    return client;
  }

  @Override
  public synchronized void close() {
    if (client != null) {
      client.close();
    }
  }
}

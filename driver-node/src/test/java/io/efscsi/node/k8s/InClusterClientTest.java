package io.efscsi.node.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class InClusterClientTest {

  final AtomicInteger built = new AtomicInteger();
  final AtomicInteger closed = new AtomicInteger();

  /** A client that only counts close(); nothing else is called here. */
  private KubernetesClient client() {
    built.incrementAndGet();
    return (KubernetesClient)
        Proxy.newProxyInstance(
            KubernetesClient.class.getClassLoader(),
            new Class<?>[] {KubernetesClient.class},
            (proxy, method, args) -> {
              if (method.getName().equals("close")) {
                closed.incrementAndGet();
                return null;
              }
              throw new UnsupportedOperationException(method.getName());
            });
  }

  @Test
  void outsideAClusterNothingIsBuiltAndEveryCallSaysWhy() {
    InClusterClient c = new InClusterClient(Map.of(), this::client);
    assertFalse(c.inCluster());
    for (int i = 0; i < 2; i++) {
      KubernetesClientException e = assertThrows(KubernetesClientException.class, c::get);
      assertEquals(
          "not running inside a Kubernetes cluster (KUBERNETES_SERVICE_HOST is not set)",
          e.getMessage());
    }
    c.close();
    assertEquals(0, built.get());
  }

  @Test
  void insideAClusterOneClientIsBuiltAtFirstUseAndClosedWithIt() {
    InClusterClient c =
        new InClusterClient(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"), this::client);
    assertTrue(c.inCluster());
    assertEquals(0, built.get(), "not before its first use");
    KubernetesClient first = c.get();
    assertSame(first, c.get());
    assertEquals(1, built.get());
    c.close();
    assertEquals(1, closed.get());
  }
}

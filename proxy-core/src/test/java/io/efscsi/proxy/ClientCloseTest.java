package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyConfig;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A kernel connection whose upstream cannot be had is ended with a FIN, never an RST, although the
 * kernel's call is still unread in the proxy's socket: the kernel RPC client reconnects at once
 * after ECONNRESET without checking its soft timeout, so an RST here kept a soft mount from failing
 * for minutes (KernelReliabilityIT scenario 6).
 */
class ClientCloseTest {

  /** An RPC record (NULL call, 40 bytes) such as the kernel sends right after connecting. */
  static final byte[] CALL = ClientSessionTest.record(40, 7);

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static ProxyServer proxy(int listenPort, int upstreamPort) throws Exception {
    return proxy(listenPort, upstreamPort, Map.of("bind.timeout-ms", "10000"));
  }

  /** A plain proxy from 127.0.0.1:listenPort to 127.0.0.1:upstreamPort, with more settings. */
  static ProxyServer proxy(int listenPort, int upstreamPort, Map<String, String> more)
      throws Exception {
    Map<String, String> m = new java.util.HashMap<>(more);
    m.put("listen.port", Integer.toString(listenPort));
    m.put("upstream.host", "127.0.0.1");
    m.put("upstream.port", Integer.toString(upstreamPort));
    m.put("tls", "false");
    return ProxyServer.start(ProxyConfig.fromMap(m), null);
  }

  /** Connects, sends a call and returns what the first read saw: -1 for a FIN. */
  static int callAndRead(int port, CountDownLatch sent) throws Exception {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(15_000);
      s.getOutputStream().write(CALL);
      s.getOutputStream().flush();
      sent.countDown();
      InputStream in = s.getInputStream();
      return in.read(); // a reset throws "Connection reset"
    }
  }

  static void awaitNoClients(ProxyServer p) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (p.metrics().activeClients.get() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertEquals(0, p.metrics().activeClients.get(), "the proxy closed its end too");
  }

  @Test
  void anUpstreamThatClosesBeforeTheBindEndsTheClientWithAFin() throws Exception {
    CountDownLatch sent = new CountDownLatch(1);
    try (ServerSocket upstream = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread.ofVirtual()
          .start(() -> {
            try (Socket s = upstream.accept()) {
              sent.await(10, TimeUnit.SECONDS);
              Thread.sleep(200); // the call is in the proxy's receive buffer, unread
            } catch (Exception e) {
              // the test fails on the client side
            }
          });
      int port = freePort();
      ProxyServer p = proxy(port, upstream.getLocalPort());
      try {
        assertEquals(-1, callAndRead(port, sent), "a FIN, not data");
        awaitNoClients(p);
        assertTrue(p.metrics().upstreamFailures.sum() >= 1);
      } finally {
        p.close();
      }
    }
  }

  @Test
  void aRefusedUpstreamEndsTheClientWithAFin() throws Exception {
    int port = freePort();
    ProxyServer p = proxy(port, freePort());
    try {
      // the first connection is ended with a FIN; later ones are refused (RefusingPortTest)
      assertEquals(-1, callAndRead(port, new CountDownLatch(1)));
      awaitNoClients(p);
    } finally {
      p.close();
    }
  }
}

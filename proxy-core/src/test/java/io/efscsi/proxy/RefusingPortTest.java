package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * While its upstream is unreachable the proxy's port refuses connections (so the kernel's transport
 * stays down and a soft mount's call fails at its first major timeout), keeps the port from every
 * other socket, and accepts again once its own probe reaches the upstream: {@link ListenerGate}.
 */
class RefusingPortTest {

  static ProxyServer proxy(int listenPort, int upstreamPort) throws Exception {
    return ClientCloseTest.proxy(listenPort, upstreamPort, Map.of("bind.protocol", "none"));
  }

  static boolean refused(int port) throws Exception {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2_000);
      return false;
    } catch (ConnectException e) {
      return true;
    }
  }

  static void await(String what, java.util.function.BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "within 10 s: " + what);
      Thread.sleep(20);
    }
  }

  static void assertCannotBind(String address, int port, boolean reuse) throws Exception {
    try (ServerSocket other = new ServerSocket()) {
      other.setReuseAddress(reuse);
      assertThrows(
          BindException.class,
          () -> other.bind(new InetSocketAddress(address, port)),
          "another socket (SO_REUSEADDR " + reuse + ") binds " + address + ":" + port);
    }
  }

  /** An upstream that echoes what it reads, one thread per connection. */
  static ServerSocket echo(int port) throws Exception {
    ServerSocket up = new ServerSocket();
    up.setReuseAddress(true);
    up.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    Thread.ofVirtual()
        .start(() -> {
          while (!up.isClosed()) {
            try {
              Socket s = up.accept();
              Thread.ofVirtual()
                  .start(() -> {
                    try (s) {
                      s.getInputStream().transferTo(s.getOutputStream());
                    } catch (Exception e) {
                      // the peer went away
                    }
                  });
            } catch (Exception e) {
              return;
            }
          }
        });
    return up;
  }

  static byte[] roundTrip(int port) throws Exception {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(ClientCloseTest.CALL);
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      return in.readNBytes(ClientCloseTest.CALL.length);
    }
  }

  @Test
  void anUnreachableUpstreamClosesThePortButNotItsOwnershipAndItsReturnOpensIt() throws Exception {
    int port = ClientCloseTest.freePort();
    int upstreamPort = ClientCloseTest.freePort();
    ProxyServer p = proxy(port, upstreamPort);
    try {
      assertFalse(p.refusing());
      assertTrue(p.statusJson().contains("\"accepting\":true"), p.statusJson());
      // the first kernel connection finds no upstream: it is ended, and the port closes
      assertEquals(-1, ClientCloseTest.callAndRead(port, new CountDownLatch(1)));
      await("the port refuses", p::refusing);
      for (int i = 0; i < 5; i++) {
        assertTrue(refused(port), "connection " + i + " is refused, not accepted and closed");
      }
      assertTrue(p.statusJson().contains("\"accepting\":false"), p.statusJson());
      assertTrue(p.statusJson().contains("\"refusals\":1"), p.statusJson());
      for (String address : new String[] {"127.0.0.1", "0.0.0.0"}) {
        assertCannotBind(address, port, true);
        assertCannotBind(address, port, false);
      }
      // the upstream comes back: the proxy's own probe finds it and the port accepts again
      try (ServerSocket up = echo(upstreamPort)) {
        await("the port accepts again", () -> !p.refusing());
        assertArrayEquals(ClientCloseTest.CALL, roundTrip(port), "traffic flows through");
        assertArrayEquals(ClientCloseTest.CALL, roundTrip(port), "and again");
      }
      // a second outage closes it again, and a second return opens it again
      await(
          "the port refuses again",
          () -> {
            try {
              ClientCloseTest.callAndRead(port, new CountDownLatch(1));
            } catch (Exception e) {
              // refused already
            }
            return p.refusing();
          });
      assertTrue(refused(port));
      assertCannotBind("127.0.0.1", port, true);
      try (ServerSocket up = echo(upstreamPort)) {
        await("the port accepts after the second outage", () -> !p.refusing());
        assertArrayEquals(ClientCloseTest.CALL, roundTrip(port));
      }
      assertTrue(p.statusJson().contains("\"refusals\":2"), p.statusJson());
    } finally {
      p.close();
    }
    // closed for good: the port is free
    try (ServerSocket again = new ServerSocket()) {
      again.setReuseAddress(true);
      again.bind(new InetSocketAddress("127.0.0.1", port));
    }
  }
}

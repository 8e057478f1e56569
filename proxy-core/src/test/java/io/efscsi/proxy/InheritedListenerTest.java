package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyEnv;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.Socket;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A proxy started on a listening socket it inherited (the supervisor's duplicate of the running
 * proxy's, here a {@code dup(2)} in this process) waits in standby, accepting nothing, until {@code
 * serve}; and closing a proxy closes only its own descriptor, so the socket keeps listening for the
 * other holder: what lets a rolling upgrade move a port without the kernel seeing a refused
 * connect.
 */
class InheritedListenerTest {

  @TempDir Path dir;
  final List<ProxyServer.Stop> stops = new CopyOnWriteArrayList<>();

  static ProxyConfig config(int port, int upstreamPort, Path control) {
    Map<String, String> m = new HashMap<>();
    m.put("listen.port", Integer.toString(port));
    m.put("upstream.host", "127.0.0.1");
    m.put("upstream.port", Integer.toString(upstreamPort));
    m.put("tls", "false");
    m.put("bind.protocol", "none");
    if (control != null) {
      m.put("control.socket", control.toString());
    }
    return ProxyConfig.fromMap(m);
  }

  ProxyServer inherited(int fd, int port, int upstreamPort, Path control, Duration standby)
      throws Exception {
    return ProxyServer.start(
        config(port, upstreamPort, control), ProxyEnv.inherited(fd, standby), null, stops::add);
  }

  /** Sends a call and reads the reply: the proxy accepted the connection and relayed both ways. */
  static void roundTrip(java.net.Socket c, int xid) throws Exception {
    c.setSoTimeout(10_000);
    c.getOutputStream().write(RpcUpstream.call(xid));
    assertArrayEquals(RpcUpstream.reply(xid), c.getInputStream().readNBytes(28));
  }

  @Test
  void inStandbyNothingIsAcceptedAndServeAcceptsWhatTheBacklogHeld() throws Throwable {
    int port = ClientCloseTest.freePort();
    Path control = dir.resolve("new.sock");
    Socket owner = Fds.socket(port, true);
    int dup = Fds.dup(owner.intValue());
    try (RpcUpstream up = new RpcUpstream(0)) {
      ProxyServer p =
          ProxyServer.start(
              config(port, up.port(), control),
              new ProxyEnv(OptionalInt.of(dup), Duration.ofMinutes(1), "0.2.0+new"),
              null,
              stops::add);
      try {
        String status = Control.ask(control, "status");
        assertTrue(status.contains("\"build\":\"0.2.0+new\""), status);
        assertTrue(status.contains("\"listener\":\"inherited\""), status);
        assertTrue(status.contains("\"accepting\":true"), "an existing field kept: " + status);
        assertTrue(status.contains("\"serving\":false"), status);
        assertTrue(status.contains("\"draining\":false"), status);
        assertTrue(Control.ask(control, "ping").startsWith("ok "), "the control socket works");
        try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
          // connected: the kernel completed the handshake into the socket's backlog
          c.getOutputStream().write(RpcUpstream.call(1));
          c.setSoTimeout(700);
          assertThrows(SocketTimeoutException.class, () -> c.getInputStream().read());
          assertEquals(0, p.metrics().clientConnections.sum(), "no session in standby");
          assertEquals(1, up.connections.get(), "only the ping reached the upstream");
          assertEquals(1, up.calls.get(), "the ping's NULL call, not the kernel's");

          assertEquals("ok serving", Control.ask(control, "serve"));
          c.setSoTimeout(10_000);
          assertArrayEquals(RpcUpstream.reply(1), c.getInputStream().readNBytes(28));
          assertEquals(1, p.metrics().clientConnections.sum());
          roundTrip(c, 2);
        }
        try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
          roundTrip(c, 3);
        }
        assertEquals("ok serving", Control.ask(control, "serve"), "serve is idempotent");
        status = Control.ask(control, "status");
        assertTrue(status.contains("\"serving\":true"), status);
        assertTrue(stops.isEmpty(), stops::toString);
      } finally {
        p.close();
      }
      assertTrue(Fds.listening(owner.intValue()), "the proxy's close left the socket listening");
    } finally {
      owner.close();
    }
  }

  /**
   * The proof a rolling upgrade rests on: a proxy that bound its port the normal way and is then
   * closed (what SIGTERM does) leaves a duplicate of its listener listening, and a proxy on the
   * duplicate accepts the next connection. Netty's epoll close takes the descriptor off the event
   * loop and close(2)s it, never shutdown(2).
   */
  @Test
  void closingTheBoundProxyLeavesItsDuplicatedListenerListening() throws Throwable {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(0)) {
      ProxyServer old = ProxyServer.start(config(port, up.port(), null), null);
      int dup;
      try {
        try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
          roundTrip(c, 1); // the listener has accepted on the event loop before it is closed
        }
        dup = Fds.dup(old.listenerFd());
      } finally {
        old.close();
      }
      assertTrue(Fds.listening(dup), "SO_ACCEPTCONN is still 1 through the duplicate");
      // a connect now succeeds (queued in the backlog), then the duplicate's owner accepts it
      try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
        Path control = dir.resolve("new.sock");
        ProxyServer next = inherited(dup, port, up.port(), control, Duration.ofMinutes(1));
        try {
          assertEquals("ok serving", Control.ask(control, "serve"));
          roundTrip(c, 2);
          assertEquals(1, next.metrics().clientConnections.sum(), "accepted by the new owner");
        } finally {
          next.close();
        }
      }
      assertTrue(RefusingPortTest.refused(port), "the last holder closed: the socket is gone");
    }
  }

  /** The test above can fail: a shutdown(2) through one descriptor stops the socket for all. */
  @Test
  void aShutdownThroughOneDescriptorStopsTheSocketForTheOther() throws Throwable {
    int port = ClientCloseTest.freePort();
    Socket owner = Fds.socket(port, true);
    int dup = Fds.dup(owner.intValue());
    try {
      ListenShutdown.stopListening(owner.intValue());
      assertFalse(Fds.listening(dup));
      assertTrue(RefusingPortTest.refused(port));
    } finally {
      Fds.close(dup);
      owner.close();
    }
  }

  @Test
  void serveListensAgainWhenAnotherHolderStoppedTheSocket() throws Throwable {
    int port = ClientCloseTest.freePort();
    Path control = dir.resolve("new.sock");
    Socket owner = Fds.socket(port, true);
    int dup = Fds.dup(owner.intValue());
    try (RpcUpstream up = new RpcUpstream(0)) {
      ProxyServer p = inherited(dup, port, up.port(), control, Duration.ofMinutes(1));
      try {
        // the old proxy's ListenerGate stops the shared socket during an outage
        ListenShutdown.stopListening(owner.intValue());
        assertTrue(RefusingPortTest.refused(port));
        assertEquals("ok serving", Control.ask(control, "serve"));
        assertTrue(Fds.listening(owner.intValue()));
        try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
          roundTrip(c, 1);
        }
        // and again after serving: a second serve checks again
        ListenShutdown.stopListening(owner.intValue());
        assertEquals("ok serving", Control.ask(control, "serve"));
        try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
          roundTrip(c, 2);
        }
      } finally {
        p.close();
      }
    } finally {
      owner.close();
    }
  }

  @Test
  void aStandbyThatIsNeverServedExitsAndLeavesTheSocketListening() throws Throwable {
    int port = ClientCloseTest.freePort();
    Socket owner = Fds.socket(port, true);
    int dup = Fds.dup(owner.intValue());
    try {
      ProxyServer p = inherited(dup, port, 1, null, Duration.ofMillis(300));
      try {
        RefusingPortTest.await("the standby runs out", () -> !stops.isEmpty());
        assertEquals(List.of(ProxyServer.Stop.STANDBY_EXPIRED), stops);
      } finally {
        p.close();
      }
      assertTrue(Fds.listening(owner.intValue()));
      assertFalse(RefusingPortTest.refused(port), "still accepting into the backlog");
    } finally {
      owner.close();
    }
  }

  /** The supervisor gives up a handover: the proxy in standby drains at once, the socket stays. */
  @Test
  void aStandbyToldToDrainExitsAndLeavesTheSocketListening() throws Throwable {
    int port = ClientCloseTest.freePort();
    Path control = dir.resolve("new.sock");
    Socket owner = Fds.socket(port, true);
    int dup = Fds.dup(owner.intValue());
    try {
      ProxyServer p = inherited(dup, port, 1, control, Duration.ofMinutes(1));
      try {
        assertEquals("ok draining 0", Control.ask(control, "drain"));
        RefusingPortTest.await("drained", () -> !stops.isEmpty());
        assertEquals(List.of(ProxyServer.Stop.DRAINED), stops);
      } finally {
        p.close();
      }
      assertTrue(Fds.listening(owner.intValue()));
    } finally {
      owner.close();
    }
  }

  @Test
  void aDescriptorThatIsNotTheListenerIsRefusedLikeABindFailure() throws Throwable {
    Epoll.ensureAvailability();
    int port = ClientCloseTest.freePort();
    int other = ClientCloseTest.freePort();
    Socket wrongPort = Fds.socket(other, true);
    Socket notListening = Fds.socket(port, false);
    Socket udp = Socket.newSocketDgram();
    try {
      assertRefused(
          wrongPort.intValue(),
          port,
          "cannot use inherited listener fd "
              + wrongPort.intValue()
              + " (EFSCSI_LISTEN_FD): it is bound to 127.0.0.1:"
              + other
              + ", expected 127.0.0.1:"
              + port);
      assertRefused(
          notListening.intValue(),
          port,
          "cannot use inherited listener fd "
              + notListening.intValue()
              + " (EFSCSI_LISTEN_FD): it is bound to 127.0.0.1:"
              + port
              + " but not listening");
      assertRefused(
          udp.intValue(),
          port,
          "cannot use inherited listener fd "
              + udp.intValue()
              + " (EFSCSI_LISTEN_FD): it is an IPv", // 4 or 6, as Netty makes it on this host
          " UDP socket bound to ",
          ":0, expected a TCP socket listening on 127.0.0.1:" + port);
      int file = Fds.open("/dev/null");
      try {
        assertRefused(
            file,
            port,
            "cannot use inherited listener fd "
                + file
                + " (EFSCSI_LISTEN_FD): it is not an open socket (",
            "Socket operation on non-socket), expected 127.0.0.1:" + port);
      } finally {
        Fds.close(file);
      }
      int none = Integer.MAX_VALUE - 1;
      assertRefused(
          none,
          port,
          "cannot use inherited listener fd "
              + none
              + " (EFSCSI_LISTEN_FD): it is not an open socket (",
          "Bad file descriptor), expected 127.0.0.1:" + port);
    } finally {
      wrongPort.close();
      notListening.close();
      udp.close();
    }
  }

  /** Starting on {@code fd} fails with a message made of {@code parts}, in this order. */
  void assertRefused(int fd, int port, String... parts) throws Exception {
    ProxyServer.BindFailedException e =
        assertThrows(
            ProxyServer.BindFailedException.class,
            () -> inherited(fd, port, 1, null, Duration.ofMinutes(1)));
    String m = e.getMessage();
    assertTrue(m.startsWith(parts[0]), m);
    int at = parts[0].length();
    for (String part : java.util.Arrays.asList(parts).subList(1, parts.length)) {
      int found = m.indexOf(part, at);
      assertTrue(found >= at, "'" + part + "' in " + m);
      at = found + part.length();
    }
    assertTrue(parts.length == 1 || at == m.length(), "nothing after the last part: " + m);
  }
}

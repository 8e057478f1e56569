package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyEnv;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code drain}: the proxy closes its descriptor of the listening socket (which keeps listening for
 * the proxy that took the port over), relays the replies its kernel connections are still due, ends
 * each with a FIN and asks its process to stop; at most {@link Handover#DRAIN_MILLIS} are spent on
 * replies.
 */
class DrainTest {

  @TempDir Path dir;
  final List<ProxyServer.Stop> stops = new CopyOnWriteArrayList<>();

  ProxyServer proxy(int port, RpcUpstream up) throws Exception {
    return ProxyServer.start(
        InheritedListenerTest.config(port, up.port(), dir.resolve("p.sock")),
        ProxyEnv.NONE,
        null,
        stops::add);
  }

  String control(String command) throws Exception {
    return Control.ask(dir.resolve("p.sock"), command);
  }

  /**
   * The client closes its end after the proxy's FIN, as the kernel's RPC client does; the proxy
   * then asks to stop at once (not after {@link ClientSession#CLOSE_GRACE_MILLIS}).
   */
  void closedByKernel(Socket c) throws Exception {
    c.close();
    long t0 = System.nanoTime();
    RefusingPortTest.await("drained", () -> !stops.isEmpty());
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(ms < 1_000, "stopped " + ms + " ms after the kernel closed");
    assertEquals(List.of(ProxyServer.Stop.DRAINED), stops);
  }

  /** Reads until the connection ends: true for a FIN, an exception for an RST. */
  static boolean finAfter(InputStream in) throws Exception {
    return in.read() == -1;
  }

  @Test
  void theRepliesStillDueArriveThenAFinAndTheSharedListenerKeepsListening() throws Throwable {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(600)) {
      ProxyServer p = proxy(port, up);
      int dup = Fds.dup(p.listenerFd()); // the new proxy's copy
      try (p;
          Socket c = new Socket(InetAddress.getLoopbackAddress(), port)) {
        c.setSoTimeout(10_000);
        for (int xid = 1; xid <= 3; xid++) {
          c.getOutputStream().write(RpcUpstream.call(xid));
        }
        RefusingPortTest.await("the calls reach the upstream", () -> up.calls.get() == 3);
        String before = control("status");
        assertTrue(before.contains("\"build\":\"\""), before);
        assertTrue(before.contains("\"listener\":\"bound\""), before);
        assertTrue(before.contains("\"serving\":true"), "a bound proxy serves at once: " + before);
        assertTrue(before.contains("\"draining\":false"), before);
        long t0 = System.nanoTime();
        assertEquals("ok draining 1", control("drain"));
        String status = p.statusJson();
        assertTrue(status.contains("\"draining\":true"), status);
        assertTrue(status.contains("\"serving\":false"), status);
        c.getOutputStream().write(RpcUpstream.call(4)); // not read any more: resent on reconnect
        InputStream in = c.getInputStream();
        for (int xid = 1; xid <= 3; xid++) {
          assertArrayEquals(RpcUpstream.reply(xid), in.readNBytes(28), "reply " + xid);
        }
        assertTrue(finAfter(in), "the connection ends with a FIN after the last reply");
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < Handover.DRAIN_MILLIS, "ended as the last reply went out: " + ms + " ms");
        assertEquals(3, up.calls.get(), "the call sent after the drain was not passed on");
        closedByKernel(c);
        assertEquals(List.of(ProxyServer.Stop.DRAINED), stops);
        assertTrue(Fds.listening(dup), "the drain left the shared socket listening");
        assertFalse(RefusingPortTest.refused(port), "a connect still gets into the backlog");
      }
      assertTrue(Fds.listening(dup), "and so did closing the drained proxy");
      Fds.close(dup);
    }
  }

  @Test
  void aConnectionWithNoReplyDueEndsAtOnce() throws Exception {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(0)) {
      ProxyServer p = proxy(port, up);
      try (Socket c = new Socket(InetAddress.getLoopbackAddress(), port)) {
        InheritedListenerTest.roundTrip(c, 1);
        long t0 = System.nanoTime();
        assertEquals("ok draining 1", control("drain"));
        assertTrue(finAfter(c.getInputStream()));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 500, "nothing to wait for, yet " + ms + " ms");
        closedByKernel(c);
      } finally {
        p.close();
      }
    }
  }

  @Test
  void anUpstreamThatNeverAnswersIsWaitedForTwoSecondsAtMost() throws Exception {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(-1)) {
      ProxyServer p = proxy(port, up);
      try (Socket c = new Socket(InetAddress.getLoopbackAddress(), port)) {
        c.setSoTimeout(10_000);
        c.getOutputStream().write(RpcUpstream.call(1));
        RefusingPortTest.await("the call reaches the upstream", () -> up.calls.get() == 1);
        long t0 = System.nanoTime();
        assertEquals("ok draining 1", control("drain"));
        assertTrue(finAfter(c.getInputStream()), "a FIN, not an RST, when the time is up");
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(
            ms >= Handover.DRAIN_MILLIS - 100 && ms < Handover.DRAIN_MILLIS + 1_000,
            "waited for the reply for " + ms + " ms");
        closedByKernel(c);
      } finally {
        p.close();
      }
    }
  }

  @Test
  void aSecondDrainOnlyAnswersAndServeIsRefusedWhileDraining() throws Exception {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(-1)) {
      ProxyServer p = proxy(port, up);
      try (Socket c = new Socket(InetAddress.getLoopbackAddress(), port)) {
        c.setSoTimeout(10_000);
        c.getOutputStream().write(RpcUpstream.call(1));
        RefusingPortTest.await("the call reaches the upstream", () -> up.calls.get() == 1);
        assertEquals("ok draining 1", control("drain"));
        assertEquals("ok draining 1", control("drain"));
        assertTrue(
            control("serve").startsWith("error draining"), "a draining proxy serves no more");
        assertTrue(finAfter(c.getInputStream()));
        closedByKernel(c);
        assertEquals("ok draining 0", control("drain"));
        Thread.sleep(200);
        assertEquals(List.of(ProxyServer.Stop.DRAINED), stops, "told to stop once");
      } finally {
        p.close();
      }
    }
  }

  @Test
  void anIdleProxyDrainsAtOnce() throws Exception {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(0)) {
      ProxyServer p = proxy(port, up);
      try {
        assertEquals("ok draining 0", control("drain"));
        RefusingPortTest.await("drained", () -> !stops.isEmpty());
        assertTrue(RefusingPortTest.refused(port), "its descriptor was the only one");
      } finally {
        p.close();
      }
    }
  }
}

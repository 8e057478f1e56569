package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyEnv;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code release} (a handback to the Go driver's tunnel): the port is free for another program to
 * bind at once, the kernel connection the proxy has keeps being relayed, and the {@code drain}
 * after it ends that connection with a FIN once its replies are out.
 */
class ReleaseTest {

  @TempDir Path dir;
  final List<ProxyServer.Stop> stops = new CopyOnWriteArrayList<>();

  String control(String command) throws Exception {
    return Control.ask(dir.resolve("p.sock"), command);
  }

  @Test
  void theReleasedPortIsFreeTheKernelConnectionIsStillServedAndDrainEndsIt() throws Exception {
    int port = ClientCloseTest.freePort();
    try (RpcUpstream up = new RpcUpstream(0);
        ProxyServer p =
            ProxyServer.start(
                InheritedListenerTest.config(port, up.port(), dir.resolve("p.sock")),
                ProxyEnv.NONE,
                null,
                stops::add);
        Socket c = new Socket(InetAddress.getLoopbackAddress(), port)) {
      c.setSoTimeout(10_000);
      InheritedListenerTest.roundTrip(c, 1);
      assertEquals("ok released 1", control("release"));
      assertEquals("ok released 1", control("release"), "a second release only answers");
      String status = p.statusJson();
      assertTrue(status.contains("\"released\":true"), status);
      assertTrue(status.contains("\"serving\":false"), status);
      assertTrue(control("serve").startsWith("error released"), "a released proxy serves no more");
      // the Go driver's tunnel binds the port, as efs-proxy and stunnel do (SO_REUSEADDR)
      try (ServerSocket tunnel = new ServerSocket()) {
        tunnel.setReuseAddress(true);
        tunnel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        InheritedListenerTest.roundTrip(c, 2); // the kernel's connection is still relayed
        assertEquals(List.of(), stops, "a released proxy keeps running");
        assertEquals("ok draining 1", control("drain"));
        InputStream in = c.getInputStream();
        assertTrue(in.read() == -1, "the drain ends the kernel connection with a FIN");
        c.close();
        RefusingPortTest.await("drained", () -> !stops.isEmpty());
        assertEquals(List.of(ProxyServer.Stop.DRAINED), stops);
        // the kernel reconnects: to the tunnel now
        try (Socket again = new Socket(InetAddress.getLoopbackAddress(), port);
            Socket accepted = tunnel.accept()) {
          again.getOutputStream().write(RpcUpstream.call(3));
          assertArrayEquals(RpcUpstream.call(3), accepted.getInputStream().readNBytes(44));
        }
      }
    }
  }
}

package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.concurrent.Future;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A detached gate never again stops or restarts the listening socket, which may be shared with a
 * proxy that took the port over: {@link ListenerGate#detach}.
 */
class ListenerGateTest {

  final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
  final AtomicInteger probes = new AtomicInteger();
  final AtomicInteger gaveUp = new AtomicInteger();
  EpollServerSocketChannel listener;
  ListenerGate gate;

  @AfterEach
  void stop() {
    if (listener != null) {
      listener.close().syncUninterruptibly();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /**
   * A listener whose probes succeed: a gate that refuses listens again after 100 ms. Bound to a
   * port given, as the proxy's is: Linux lets go of a port bound as 0 when the socket stops
   * listening, and listens again on another one.
   */
  int start() throws Exception {
    listener =
        (EpollServerSocketChannel)
            new ServerBootstrap()
                .group(group)
                .channel(EpollServerSocketChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter())
                .bind(new InetSocketAddress("127.0.0.1", ClientCloseTest.freePort()))
                .sync()
                .channel();
    gate =
        new ListenerGate(
            listener,
            ProxyServer.BACKLOG,
            () -> {
              probes.incrementAndGet();
              return (Future<?>) listener.eventLoop().newSucceededFuture(null);
            },
            UpstreamOutage.standard(),
            100,
            gaveUp::incrementAndGet);
    return listener.localAddress().getPort();
  }

  /** Waits until the loop has run what was queued before. */
  void settle() throws Exception {
    Channel ch = listener;
    ch.eventLoop().submit(() -> {}).sync();
    Thread.sleep(300); // three probe periods
    ch.eventLoop().submit(() -> {}).sync();
  }

  @Test
  void afterDetachAnOutageNoLongerStopsTheSocket() throws Exception {
    int port = start();
    gate.detach();
    gate.upstreamDown();
    settle();
    assertFalse(gate.refusing());
    assertTrue(Fds.listening(ListenerSocket.fd(listener)));
    assertFalse(RefusingPortTest.refused(port));
  }

  @Test
  void aGateDetachedWhileRefusingNeverListensAgain() throws Exception {
    int port = start();
    int fd = ListenerSocket.fd(listener);
    listener.eventLoop().submit(() -> gate.upstreamDown()).sync();
    RefusingPortTest.await("refusing", gate::refusing);
    assertTrue(RefusingPortTest.refused(port));
    listener.eventLoop().submit(gate::detach).sync();
    int before = probes.get();
    settle();
    assertEquals(before, probes.get(), "no probe after detach");
    assertFalse(Fds.listening(fd), "the listen state is the new holder's to restore");
    assertTrue(RefusingPortTest.refused(port));
    assertEquals(0, gaveUp.get());
  }

  /** Without detach the same gate listens again: the test above can fail. */
  @Test
  void anAttachedGateListensAgainAfterItsProbe() throws Exception {
    int port = start();
    gate.upstreamDown();
    RefusingPortTest.await("refusing", gate::refusing);
    RefusingPortTest.await("listening again", () -> !gate.refusing());
    assertTrue(Fds.listening(ListenerSocket.fd(listener)));
    assertFalse(RefusingPortTest.refused(port));
    assertTrue(probes.get() >= 1);
  }
}

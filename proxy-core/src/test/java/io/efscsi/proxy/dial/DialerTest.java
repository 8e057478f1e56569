package io.efscsi.proxy.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.util.concurrent.Future;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Happy Eyeballs on loopback with real epoll sockets: a live listener on {@code ::1} or {@code
 * 127.0.0.1}, the other family dead. A dead address that hangs is a loopback port whose accept
 * queue is full (the kernel drops the SYNs, as a black hole does); an unroutable one is {@code
 * 100::1} (the discard-only prefix: it hangs where there is an IPv6 default route, fails at once
 * with ENETUNREACH where there is none).
 */
class DialerTest {

  static final Duration DELAY = Duration.ofMillis(250);
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  static EventLoopGroup group;
  static EventLoop loop;

  @BeforeAll
  static void start() {
    group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    loop = group.next();
    // load epoll's classes and native parts before anything is timed
    try (ServerSocket s = live("127.0.0.1")) {
      dial(new Dialer("127.0.0.1", s.getLocalPort(), DELAY, TIMEOUT, HostLookup.SYSTEM));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterAll
  static void stop() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  static Bootstrap bootstrap() {
    return new Bootstrap().channel(EpollSocketChannel.class).option(ChannelOption.AUTO_READ, false);
  }

  /** A listener that accepts (the kernel does; nobody calls accept). */
  static ServerSocket live(String address) throws Exception {
    return live(address, 0);
  }

  static ServerSocket live(String address, int port) throws Exception {
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress(InetAddress.ofLiteral(address), port), 50);
    return s;
  }

  /**
   * A loopback port where connects hang: its accept queue is full, so the kernel drops new SYNs.
   */
  record Hanging(ServerSocket listener, List<Socket> queued) implements AutoCloseable {

    static Hanging on(String address, int port) throws Exception {
      ServerSocket s = new ServerSocket();
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(InetAddress.ofLiteral(address), port), 1);
      List<Socket> queued = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        Socket c = new Socket();
        queued.add(c);
        try {
          c.connect(s.getLocalSocketAddress(), 300);
        } catch (SocketTimeoutException full) {
          c.close();
          return new Hanging(s, queued);
        }
      }
      s.close();
      throw new IllegalStateException("the accept queue of " + address + " never filled");
    }

    int port() {
      return listener.getLocalPort();
    }

    @Override
    public void close() throws Exception {
      for (Socket c : queued) {
        c.close();
      }
      listener.close();
    }
  }

  /** A name that resolves to {@code addresses}, in this order. */
  static HostLookup resolvesTo(String... addresses) {
    List<InetAddress> all = AddressOrderTest.ips(addresses);
    return host -> {
      assertEquals("fs-1.efs.test", host);
      return all;
    };
  }

  record Timed(Dialer.Dialed dialed, long millis) {}

  static Timed dial(Dialer d) throws Exception {
    long t0 = System.nanoTime();
    Future<Dialer.Dialed> f = d.dial(bootstrap(), loop);
    Dialer.Dialed dialed = f.get(15, TimeUnit.SECONDS);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    dialed.channel().close().sync();
    return new Timed(dialed, ms);
  }

  static Throwable dialFails(Dialer d) throws Exception {
    try {
      d.dial(bootstrap(), loop).get(15, TimeUnit.SECONDS).channel().close();
    } catch (ExecutionException e) {
      return e.getCause();
    }
    return fail("connected");
  }

  static void report(String what, Timed t) {
    System.out.printf(
        "happy eyeballs: %s: %d ms to connect to %s (passed over: %s)%n",
        what, t.millis(), ConnectionRace.describe(t.dialed().address()), t.dialed().passedOver());
  }

  /** A live listener and a hanging one on the same port (the dialer has one port for all). */
  record DualStack(ServerSocket live, Hanging dead) implements AutoCloseable {

    static DualStack of(String liveAddress, String deadAddress) throws Exception {
      for (int i = 0; ; i++) {
        ServerSocket live = DialerTest.live(liveAddress, 0);
        try {
          return new DualStack(live, Hanging.on(deadAddress, live.getLocalPort()));
        } catch (java.net.BindException taken) {
          live.close();
          if (i == 10) {
            throw taken;
          }
        }
      }
    }

    /** On a port used before. */
    static DualStack at(int port, String liveAddress, String deadAddress) throws Exception {
      ServerSocket live = DialerTest.live(liveAddress, port);
      return new DualStack(live, Hanging.on(deadAddress, port));
    }

    int port() {
      return live.getLocalPort();
    }

    @Override
    public void close() throws Exception {
      dead.close();
      live.close();
    }
  }

  static Dialer dialer(int port, HostLookup lookup) {
    return new Dialer("fs-1.efs.test", port, DELAY, TIMEOUT, lookup);
  }

  @Test
  void aHangingIpv6FallsBackToIpv4AfterTheDelayAndIpv4IsRemembered() throws Exception {
    try (DualStack net = DualStack.of("127.0.0.1", "::1")) {
      Dialer d = dialer(net.port(), resolvesTo("127.0.0.1", "::1"));
      assertEquals(Family.IPV6, d.preferred());
      Timed first = dial(d);
      report("IPv6 hangs, first connection", first);
      assertEquals(Family.IPV4, first.dialed().family());
      assertTrue(first.millis() >= DELAY.toMillis(), "the IPv6 attempt ran alone for the delay");
      assertTrue(first.millis() < 5_000, "well before the connect timeout: " + first.millis());
      assertEquals(1, first.dialed().passedOver().size(), first.dialed().passedOver().toString());
      assertTrue(
          first
              .dialed()
              .passedOver()
              .getFirst()
              .matches("\\[::1]:\\d+: not connected after \\d+ ms"),
          first.dialed().passedOver().getFirst());
      assertEquals(Family.IPV4, d.preferred(), "the family that worked is remembered");

      Timed second = dial(d);
      report("IPv6 hangs, next connection", second);
      assertEquals(Family.IPV4, second.dialed().family());
      assertFalse(second.dialed().fellBack(), "IPv4 first: nothing to wait for");
    }
  }

  @Test
  void aHangingIpv4CostsNothingWhileIpv6IsPreferredAndIsLeftWhenItWasRemembered() throws Exception {
    try (DualStack net = DualStack.of("::1", "127.0.0.1")) {
      Dialer d = dialer(net.port(), resolvesTo("127.0.0.1", "::1"));
      Timed first = dial(d);
      report("IPv4 hangs, first connection", first);
      assertEquals(Family.IPV6, first.dialed().family());
      assertFalse(first.dialed().fellBack(), "IPv6 is tried first");
    }
    // the reverse on one dialer: IPv4 worked and is remembered, then IPv4 hangs and IPv6 works
    int port;
    Dialer d;
    try (DualStack dead6 = DualStack.of("127.0.0.1", "::1")) {
      port = dead6.port();
      d = dialer(port, resolvesTo("127.0.0.1", "::1"));
      assertEquals(Family.IPV4, dial(d).dialed().family());
      assertEquals(Family.IPV4, d.preferred());
    }
    try (DualStack dead4 = DualStack.at(port, "::1", "127.0.0.1")) {
      Timed t = dial(d);
      report("IPv4 hangs after IPv4 was remembered", t);
      assertEquals(Family.IPV6, t.dialed().family());
      assertTrue(t.millis() >= DELAY.toMillis(), "IPv4 (remembered) ran alone for the delay");
      assertTrue(t.dialed().passedOver().getFirst().startsWith("127.0.0.1:"));
      assertEquals(Family.IPV6, d.preferred(), "and IPv6 is remembered again");
    }
  }

  /** Dials a name resolving to {@code dead} and a live 127.0.0.1: IPv4 wins after {@code dead}. */
  static Timed fallsBackToIpv4From(String dead, String what) throws Exception {
    try (ServerSocket v4 = live("127.0.0.1")) {
      Timed t = dial(dialer(v4.getLocalPort(), resolvesTo(dead, "127.0.0.1")));
      report(what, t);
      assertEquals(Family.IPV4, t.dialed().family());
      assertTrue(
          t.dialed().passedOver().getFirst().startsWith("[" + dead + "]:"),
          t.dialed().passedOver().toString());
      return t;
    }
  }

  @Test
  void anUnroutableIpv6FallsBackToIpv4() throws Exception {
    Timed t = fallsBackToIpv4From("100::1", "IPv6 unroutable (100::1), first connection");
    // hanging (an IPv6 default route): the delay; ENETUNREACH (no route): at once
    assertTrue(t.millis() < 5_000, "well before the connect timeout: " + t.millis());
  }

  @Test
  void aRefusedAddressIsLeftAtOnce() throws Exception {
    // nothing listens on ::1 at this port: refused, the next address starts without the delay
    Timed t = fallsBackToIpv4From("::1", "IPv6 refused");
    assertTrue(t.millis() < DELAY.toMillis(), "no delay after a failure: " + t.millis());
    assertTrue(
        t.dialed().passedOver().getFirst().contains("Connection refused"),
        t.dialed().passedOver().toString());
  }

  @Test
  void whenEveryAddressFailsTheMessageNamesEachWithItsCause() throws Exception {
    int port;
    try (ServerSocket s = live("127.0.0.1")) {
      port = s.getLocalPort();
    }
    Throwable e = dialFails(dialer(port, resolvesTo("127.0.0.1", "::1", "10.0.0.1")));
    String m = e.getMessage();
    assertTrue(m.startsWith("tried [::1]:" + port + ": "), m);
    assertTrue(m.contains("127.0.0.1:" + port + ": "), m);
    assertTrue(m.contains("10.0.0.1:" + port + ": "), m);
    assertTrue(m.contains("Connection refused"), m);
  }

  @Test
  void whenNothingConnectsTheRaceEndsAtTheTimeout() throws Exception {
    try (Hanging v6 = Hanging.on("::1", 0);
        Hanging v4 = Hanging.on("127.0.0.1", v6.port())) {
      Dialer d =
          new Dialer(
              "fs-1.efs.test",
              v6.port(),
              DELAY,
              Duration.ofMillis(800),
              resolvesTo("::1", "127.0.0.1"));
      long t0 = System.nanoTime();
      String m = dialFails(d).getMessage();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(ms >= 700 && ms < 3_000, "the whole race took the timeout: " + ms);
      assertTrue(m.contains("[::1]:" + v6.port() + ": ConnectTimeoutException"), m);
      assertTrue(m.contains("127.0.0.1:" + v6.port() + ": ConnectTimeoutException"), m);
    }
  }

  @Test
  void anIpAddressIsConnectedAsGivenWithoutResolving() throws Exception {
    HostLookup never =
        host -> {
          throw new AssertionError("resolved " + host);
        };
    for (String ip : List.of("127.0.0.1", "::1")) {
      try (ServerSocket s = live(ip)) {
        Timed t = dial(new Dialer(ip, s.getLocalPort(), DELAY, TIMEOUT, never));
        assertEquals(
            new InetSocketAddress(InetAddress.ofLiteral(ip), s.getLocalPort()),
            t.dialed().address());
        assertFalse(t.dialed().fellBack());
      }
    }
    try (Hanging h = Hanging.on("::1", 0)) {
      Dialer d = new Dialer("::1", h.port(), DELAY, Duration.ofMillis(500), never);
      String m = dialFails(d).getMessage();
      assertTrue(m.matches("tried \\[::1]:\\d+: ConnectTimeoutException: .* after \\d+ ms"), m);
      assertEquals(Family.IPV6, d.preferred());
    }
  }

  @Test
  void aNameThatDoesNotResolveSaysSo() throws Exception {
    Dialer d =
        dialer(
            2049,
            host -> {
              throw new java.net.UnknownHostException(host + ": Name or service not known");
            });
    String m = dialFails(d).getMessage();
    assertTrue(m.startsWith("cannot resolve fs-1.efs.test: "), m);
  }
}

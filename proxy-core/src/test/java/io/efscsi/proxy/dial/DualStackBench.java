package io.efscsi.proxy.dial;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.Future;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * Time to connect to a mount target whose name has one dead family, before and after Happy
 * Eyeballs, on loopback (the dead address hangs: {@link DialerTest.Hanging}, or is {@code 100::1}).
 * Before is the connect the proxy made until now: Netty's connect to the unresolved name, one
 * attempt at the first address the JDK returns (IPv4 first, its default), 10 s timeout; and the
 * same with IPv6 first (the JDK with {@code -Djava.net.preferIPv6Addresses=true}, or the Go
 * driver's order). After is {@link Dialer} on the JDK's resolver: the first connection and the next
 * one (the family remembered). Names come from the hosts file that benchmarks/dualstack.py passes
 * as {@code -Djdk.net.hosts.file}: {@code dualstack.test} is {@code ::1} and {@code 127.0.0.1},
 * {@code unroutable6.test} is {@code 100::1} and {@code 127.0.0.1}.
 */
public final class DualStackBench {

  static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final EventLoop loop;

  private DualStackBench(EventLoop loop) {
    this.loop = loop;
  }

  record Outcome(long millis, String what) {
    @Override
    public String toString() {
      return String.format("%6d ms %s", millis, what);
    }
  }

  public static void main(String[] args) throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    try {
      DualStackBench b = new DualStackBench(group.next());
      try (ServerSocket warm = DialerTest.live("127.0.0.1")) {
        // epoll's classes and native parts loaded before anything is timed
        b.before(new InetSocketAddress(InetAddress.getLoopbackAddress(), warm.getLocalPort()));
        b.after(new Dialer("127.0.0.1", warm.getLocalPort(), TIMEOUT, TIMEOUT, HostLookup.SYSTEM));
      }
      for (String name : new String[] {"dualstack.test", "unroutable6.test"}) {
        System.out.println(
            name + " resolves to " + Arrays.toString(InetAddress.getAllByName(name)));
      }
      try (DialerTest.DualStack net = DialerTest.DualStack.of("127.0.0.1", "::1")) {
        b.report("IPv6 hangs, IPv4 answers", "dualstack.test", net.port());
      }
      try (DialerTest.DualStack net = DialerTest.DualStack.of("::1", "127.0.0.1")) {
        b.report("IPv4 hangs, IPv6 answers", "dualstack.test", net.port());
      }
      try (ServerSocket v4 = DialerTest.live("127.0.0.1")) {
        b.report("IPv6 unroutable (100::1), IPv4 answers", "unroutable6.test", v4.getLocalPort());
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  private void report(String title, String name, int port) throws Exception {
    System.out.println(title + " (" + name + ":" + port + ")");
    Outcome jdkOrder = before(InetSocketAddress.createUnresolved(name, port));
    InetAddress v6 =
        Arrays.stream(InetAddress.getAllByName(name))
            .filter(a -> a instanceof Inet6Address)
            .findFirst()
            .orElseThrow();
    Outcome v6First = before(new InetSocketAddress(v6, port));
    Dialer d = new Dialer(name, port, Duration.ofMillis(250), TIMEOUT, HostLookup.SYSTEM);
    Outcome first = after(d);
    Outcome next = after(d);
    System.out.println("  before, JDK order (IPv4 first): " + jdkOrder);
    System.out.println("  before, IPv6 first:             " + v6First);
    System.out.println("  after, first connection:        " + first);
    System.out.println("  after, next connection:         " + next);
    long worst = Math.max(jdkOrder.millis(), v6First.millis());
    System.out.printf(
        "  worst before / after first: %d / %d ms = %.0fx%n",
        worst, Math.max(1, first.millis()), (double) worst / Math.max(1, first.millis()));
  }

  /** The proxy's connect until now: one attempt, 10 s. */
  private Outcome before(InetSocketAddress target) throws Exception {
    long t0 = System.nanoTime();
    ChannelFuture cf =
        new Bootstrap()
            .group(loop)
            .channel(io.netty.channel.epoll.EpollSocketChannel.class)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) TIMEOUT.toMillis())
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    // nothing: TCP only
                  }
                })
            .connect(target)
            .await();
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    if (!cf.isSuccess()) {
      return new Outcome(ms, "FAILED: " + cf.cause());
    }
    String to = String.valueOf(cf.channel().remoteAddress());
    cf.channel().close().sync();
    return new Outcome(ms, "connected to " + to);
  }

  private Outcome after(Dialer d) throws Exception {
    long t0 = System.nanoTime();
    Future<Dialer.Dialed> f = d.dial(DialerTest.bootstrap(), loop).await();
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    if (!f.isSuccess()) {
      return new Outcome(ms, "FAILED: " + f.cause());
    }
    f.getNow().channel().close().sync();
    return new Outcome(
        ms,
        "connected to "
            + ConnectionRace.describe(f.getNow().address())
            + " ("
            + f.getNow().family()
            + ")");
  }
}

package io.efscsi.proxy.dial;

import io.efscsi.proxy.util.Causes;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Happy Eyeballs race (RFC 8305 section 5) on one event loop: a TCP connect to the first
 * address, the next one when the running attempts have not connected within the attempt delay, or
 * at once when an attempt fails; the first connection wins and the other attempts are closed. The
 * whole race ends at its deadline: every attempt's connect timeout is the time left. Only plain TCP
 * is raced; the caller adds its handlers (TLS first) to the winner.
 */
final class ConnectionRace {

  /**
   * The connected channel (AUTO_READ as the bootstrap set it, an empty pipeline) and what was tried
   * before it: failed attempts with their causes and those still connecting when it won.
   */
  record Winner(Channel channel, InetSocketAddress address, List<String> passedOver) {
    Winner {
      passedOver = List.copyOf(passedOver);
    }
  }

  /** The raced channels' only handler, replaced by the caller's once one has won. */
  private static final ChannelInitializer<Channel> NONE =
      new ChannelInitializer<>() {
        @Override
        protected void initChannel(Channel ch) {
          // nothing until the race is won
        }
      };

  private final Bootstrap bootstrap;
  private final List<InetSocketAddress> addresses;
  private final long delayNanos;
  private final long deadline;
  private final Promise<Winner> result;
  private final List<Attempt> running = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();
  private int next;
  private ScheduledFuture<?> timer;

  /** A connect under way. */
  private record Attempt(ChannelFuture future, InetSocketAddress address, long startedNanos) {}

  private ConnectionRace(
      Bootstrap bootstrap,
      EventLoop loop,
      List<InetSocketAddress> addresses,
      Duration delay,
      Duration timeout) {
    this.bootstrap = bootstrap.clone(loop).handler(NONE);
    this.addresses = List.copyOf(addresses);
    this.delayNanos = delay.toNanos();
    this.deadline = System.nanoTime() + timeout.toNanos();
    this.result = loop.newPromise();
  }

  /**
   * Races connections to {@code addresses} (in this order, not empty) with {@code bootstrap}'s
   * channel and options on {@code loop}; fails when every attempt failed or none connected within
   * {@code timeout}, naming each address and its cause.
   */
  static Future<Winner> run(
      Bootstrap bootstrap,
      EventLoop loop,
      List<InetSocketAddress> addresses,
      Duration delay,
      Duration timeout) {
    ConnectionRace race = new ConnectionRace(bootstrap, loop, addresses, delay, timeout);
    if (loop.inEventLoop()) {
      race.startNext();
    } else {
      loop.execute(race::startNext);
    }
    return race.result;
  }

  private void startNext() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
    if (result.isDone() || next == addresses.size()) {
      return;
    }
    InetSocketAddress address = addresses.get(next++);
    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    ChannelFuture cf =
        bootstrap
            .clone()
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, left))
            .connect(address);
    Attempt attempt = new Attempt(cf, address, System.nanoTime());
    running.add(attempt);
    cf.addListener(f -> finished(attempt));
    if (next < addresses.size() && !cf.isDone()) {
      timer = cf.channel().eventLoop().schedule(this::startNext, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  private void finished(Attempt attempt) {
    running.remove(attempt);
    ChannelFuture cf = attempt.future();
    if (cf.isSuccess()) {
      if (!result.isDone()) {
        won(cf.channel(), attempt.address());
      } else {
        cf.channel().close();
      }
      return;
    }
    if (result.isDone()) {
      return;
    }
    failures.add(
        describe(attempt.address())
            + ": "
            + Causes.rootMessage(cf.cause())
            + " after "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - attempt.startedNanos())
            + " ms");
    if (next < addresses.size()) {
      startNext();
    } else if (running.isEmpty()) {
      result.tryFailure(new IOException("tried " + String.join("; ", failures), cf.cause()));
    }
  }

  private void won(Channel channel, InetSocketAddress address) {
    if (timer != null) {
      timer.cancel(false);
    }
    List<String> passedOver = new ArrayList<>(failures);
    long now = System.nanoTime();
    List<Attempt> losers = List.copyOf(running);
    running.clear();
    for (Attempt a : losers) {
      passedOver.add(
          describe(a.address())
              + ": not connected after "
              + TimeUnit.NANOSECONDS.toMillis(now - a.startedNanos())
              + " ms");
    }
    result.trySuccess(new Winner(channel, address, passedOver));
    for (Attempt a : losers) {
      a.future().channel().close();
    }
  }

  static String describe(InetSocketAddress a) {
    return NetUtil.toSocketAddressString(a);
  }
}

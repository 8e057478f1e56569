package io.efscsi.proxy.dial;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TCP to the mount target. An IP address is connected as given. A DNS name is resolved again for
 * every connection (both families) and its addresses are raced with Happy Eyeballs (RFC 8305): IPv6
 * first unless IPv4 is the family a race last fell back to in this process, the next address after
 * the attempt delay or at once when an attempt fails, the first connection wins. A race won by the
 * other family after the preferred one failed or hung makes that family the preferred one, with one
 * log line.
 */
public final class Dialer {

  private static final Logger log = LoggerFactory.getLogger(Dialer.class);

  /**
   * A connected channel with an empty pipeline, the address it reached and the attempts passed over
   * (empty when the first address connected).
   */
  public record Dialed(Channel channel, InetSocketAddress address, List<String> passedOver) {
    public Dialed {
      passedOver = List.copyOf(passedOver);
    }

    public Family family() {
      return Family.of(address.getAddress());
    }

    /** Another address was tried first. */
    public boolean fellBack() {
      return !passedOver.isEmpty();
    }
  }

  private final String host;
  private final int port;
  private final Duration attemptDelay;
  private final Duration timeout;
  private final HostLookup lookup;
  private final Optional<InetAddress> literal;
  private volatile Family preferred = Family.IPV6;

  /**
   * @param host a DNS name or an IP address
   * @param attemptDelay RFC 8305's Connection Attempt Delay
   * @param timeout how long one connection (the whole race) may take
   * @param lookup resolves {@code host} when it is a name
   */
  public Dialer(String host, int port, Duration attemptDelay, Duration timeout, HostLookup lookup) {
    this.host = host;
    this.port = port;
    this.attemptDelay = attemptDelay;
    this.timeout = timeout;
    this.lookup = lookup;
    this.literal = literal(host);
  }

  /**
   * Connects with {@code bootstrap}'s channel type and options on {@code loop}. Resolution runs on
   * the calling thread, as Netty's own resolver for an unresolved address does.
   */
  public Future<Dialed> dial(Bootstrap bootstrap, EventLoop loop) {
    Promise<Dialed> done = loop.newPromise();
    List<InetAddress> order;
    if (literal.isPresent()) {
      order = List.of(literal.get());
    } else {
      try {
        order = AddressOrder.interleave(lookup.resolve(host), preferred);
      } catch (UnknownHostException | RuntimeException e) {
        return done.setFailure(new IOException("cannot resolve " + host + ": " + e, e));
      }
      if (order.isEmpty()) {
        return done.setFailure(new IOException("cannot resolve " + host + ": no addresses"));
      }
    }
    List<InetSocketAddress> addresses =
        order.stream().map(a -> new InetSocketAddress(a, port)).toList();
    ConnectionRace.run(bootstrap, loop, addresses, attemptDelay, timeout)
        .addListener(f -> {
          if (!f.isSuccess()) {
            done.setFailure(f.cause());
            return;
          }
          ConnectionRace.Winner w = (ConnectionRace.Winner) f.getNow();
          Dialed d = new Dialed(w.channel(), w.address(), w.passedOver());
          remember(d);
          if (!done.trySuccess(d)) {
            d.channel().close();
          }
        });
    return done;
  }

  /** The family new connections to a name try first. */
  public Family preferred() {
    return preferred;
  }

  private void remember(Dialed d) {
    if (!d.fellBack() || d.family() == preferred) {
      return;
    }
    preferred = d.family();
    log.info(
        "{} connected over {} at {} after {}; new connections try {} first",
        host,
        d.family(),
        ConnectionRace.describe(d.address()),
        String.join("; ", d.passedOver()),
        d.family());
  }

  /** The address when {@code host} is an IPv4 or IPv6 literal (brackets allowed), else empty. */
  static Optional<InetAddress> literal(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.indexOf(':') < 0 && !h.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))) {
      return Optional.empty();
    }
    try {
      return Optional.of(InetAddress.ofLiteral(h));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}

package io.efscsi.proxy;

import io.efscsi.proxy.ProxyServer.BindFailedException;
import io.efscsi.proxy.config.ProxyEnv;
import io.netty.channel.ChannelException;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.unix.Socket;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The listening TCP socket as a socket, beside Netty's channel on it: checks a descriptor inherited
 * from another proxy before it is used, and reads and restores the socket's listen state ({@code
 * SO_ACCEPTCONN}, {@code listen(2)}), which another process holding the same socket may have
 * changed. Through Netty's native {@code Socket} ({@code getsockopt}); Linux constants.
 */
final class ListenerSocket {

  private static final int SOL_SOCKET = 1;
  private static final int SO_TYPE = 3;
  private static final int SO_ACCEPTCONN = 30;
  private static final int SO_PROTOCOL = 38;
  private static final int SO_DOMAIN = 39;
  private static final int AF_UNIX = 1;
  private static final int AF_INET = 2;
  private static final int AF_INET6 = 10;
  private static final int SOCK_STREAM = 1;
  private static final int SOCK_DGRAM = 2;
  private static final int IPPROTO_TCP = 6;
  private static final int IPPROTO_UDP = 17;

  private ListenerSocket() {}

  /**
   * The inherited descriptor {@code fd} as the proxy's listener channel, not yet registered, after
   * checking that it is a TCP socket bound to 127.0.0.1:{@code port} and listening. Netty's own
   * listeners are IPv6 sockets where the host has IPv6, bound to the mapped ::ffff:127.0.0.1, which
   * counts as 127.0.0.1. The descriptor is left alone when it is refused.
   *
   * @throws BindFailedException naming the descriptor, what it is and the expected address
   */
  static EpollServerSocketChannel adopt(int fd, int port) throws BindFailedException {
    Epoll.ensureAvailability();
    String expected = "127.0.0.1:" + port;
    String what =
        "cannot use inherited listener fd " + fd + " (" + ProxyEnv.LISTEN_FD + "): it is ";
    Socket s;
    int domain;
    int type;
    int protocol;
    boolean accepting;
    try {
      s = new Socket(fd); // a view for getsockopt only, never closed
      domain = s.getIntOpt(SOL_SOCKET, SO_DOMAIN);
      type = s.getIntOpt(SOL_SOCKET, SO_TYPE);
      protocol = s.getIntOpt(SOL_SOCKET, SO_PROTOCOL);
      accepting = s.getIntOpt(SOL_SOCKET, SO_ACCEPTCONN) == 1;
    } catch (IOException | ChannelException e) {
      throw new BindFailedException(
          what + "not an open socket (" + e.getMessage() + "), expected " + expected, e);
    }
    boolean ip = domain == AF_INET || domain == AF_INET6;
    if (!ip || type != SOCK_STREAM || protocol != IPPROTO_TCP) {
      throw new BindFailedException(
          what
              + kind(domain, type, protocol)
              + (ip ? " bound to " + at(s) : "")
              + ", expected a TCP socket listening on "
              + expected,
          null);
    }
    InetSocketAddress bound = s.localAddress();
    if (bound == null
        || bound.getPort() != port
        || !"127.0.0.1".equals(bound.getAddress().getHostAddress())) {
      throw new BindFailedException(what + "bound to " + at(s) + ", expected " + expected, null);
    }
    if (!accepting) {
      throw new BindFailedException(what + "bound to " + at(s) + " but not listening", null);
    }
    return new EpollServerSocketChannel(fd);
  }

  /** Whether the socket under {@code listener} listens now (any process may have stopped it). */
  static boolean listening(EpollServerSocketChannel listener) throws IOException {
    return socket(listener).getIntOpt(SOL_SOCKET, SO_ACCEPTCONN) == 1;
  }

  /**
   * Makes the socket under {@code listener} listen again, as {@link ListenerGate} does after an
   * outage: {@code SO_REUSEADDR} on (accepted sockets may share the port with a later listen), then
   * {@code listen(2)}.
   */
  static void listenAgain(EpollServerSocketChannel listener, int backlog) throws IOException {
    listener.config().setOption(ChannelOption.SO_REUSEADDR, true);
    socket(listener).listen(backlog);
  }

  /** The descriptor number of {@code listener}. */
  static int fd(EpollServerSocketChannel listener) {
    return listener.fd().intValue();
  }

  private static Socket socket(EpollServerSocketChannel listener) {
    return (Socket) listener.fd();
  }

  private static String at(Socket s) {
    InetSocketAddress a = s.localAddress();
    if (a == null) {
      return "nothing";
    }
    String host = a.getAddress().getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  private static String kind(int domain, int type, int protocol) {
    String family =
        switch (domain) {
          case AF_UNIX -> "a unix";
          case AF_INET -> "an IPv4";
          case AF_INET6 -> "an IPv6";
          default -> "a family " + domain;
        };
    String sort =
        type == SOCK_STREAM && protocol == IPPROTO_TCP
            ? "TCP"
            : type == SOCK_DGRAM && protocol == IPPROTO_UDP
                ? "UDP"
                : "type " + type + " protocol " + protocol;
    return family + " " + sort + " socket";
  }
}

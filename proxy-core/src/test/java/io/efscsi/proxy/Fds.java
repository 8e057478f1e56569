package io.efscsi.proxy;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.Socket;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.net.InetSocketAddress;

/**
 * Descriptors as the supervisor handles them, in this process: {@code dup(2)} stands for its {@code
 * pidfd_getfd(2)} (both give a new descriptor of the same open socket), and raw sockets through
 * Netty's native {@link Socket}.
 */
final class Fds {

  private static final MethodHandle DUP = link("dup", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  private static final MethodHandle CLOSE =
      link("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

  private static final MethodHandle OPEN =
      link("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

  private Fds() {}

  /** A descriptor of {@code path}, read-only: open, but not a socket. */
  static int open(String path) throws Throwable {
    try (Arena arena = Arena.ofConfined()) {
      int fd = (int) OPEN.invokeExact(arena.allocateFrom(path), 0);
      if (fd < 0) {
        throw new IOException("open(" + path + ") failed");
      }
      return fd;
    }
  }

  @SuppressWarnings("restricted") // tests run with the JDK's default: a warning, not an error
  private static MethodHandle link(String name, FunctionDescriptor f) {
    Linker linker = Linker.nativeLinker();
    return linker.downcallHandle(linker.defaultLookup().find(name).orElseThrow(), f);
  }

  /** A new descriptor of the socket behind {@code fd}. */
  static int dup(int fd) throws Throwable {
    int copy = (int) DUP.invokeExact(fd);
    if (copy < 0) {
      throw new IOException("dup(" + fd + ") failed");
    }
    return copy;
  }

  static void close(int fd) throws Throwable {
    int rc = (int) CLOSE.invokeExact(fd);
    if (rc != 0) {
      throw new IOException("close(" + fd + ") failed");
    }
  }

  /** A TCP socket bound to 127.0.0.1:port, listening when {@code listen}; nobody accepts on it. */
  static Socket socket(int port, boolean listen) throws IOException {
    Epoll.ensureAvailability();
    Socket s = Socket.newSocketStream();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress("127.0.0.1", port));
    if (listen) {
      s.listen(ProxyServer.BACKLOG);
    }
    return s;
  }

  /** SO_ACCEPTCONN of the socket behind {@code fd}: whether it listens now. */
  static boolean listening(int fd) throws IOException {
    return new Socket(fd).getIntOpt(1, 30) == 1;
  }
}

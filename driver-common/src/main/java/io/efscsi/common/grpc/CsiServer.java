package io.efscsi.common.grpc;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CSI gRPC server shared by the controller and node plugins: grpc-java on Netty epoll, on a
 * unix domain socket or TCP. Every service is wrapped by the error-mapping and call-logging
 * interceptors. Handlers run on virtual threads, so a call blocked on a mount or a cloud API does
 * not hold a platform thread.
 */
public final class CsiServer {

  private static final Logger log = LoggerFactory.getLogger(CsiServer.class);

  private final Endpoint endpoint;
  private final Server server;
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final ExecutorService executor;

  private CsiServer(
      Endpoint endpoint,
      Server server,
      EventLoopGroup boss,
      EventLoopGroup workers,
      ExecutorService executor) {
    this.endpoint = endpoint;
    this.server = server;
    this.boss = boss;
    this.workers = workers;
    this.executor = executor;
  }

  /**
   * Binds {@code endpoint} and starts serving {@code services}. For a unix socket the parent
   * directory is created, a stale socket left by a dead process is removed (a live one is not: two
   * plugins must not share a socket), and the socket is made {@code 0660}.
   */
  public static CsiServer start(Endpoint endpoint, List<BindableService> services)
      throws IOException {
    return start(endpoint, services, List.of());
  }

  /** As {@link #start(Endpoint, List)}, with interceptors around every service (outermost). */
  public static CsiServer start(
      Endpoint endpoint, List<BindableService> services, List<io.grpc.ServerInterceptor> outer)
      throws IOException {
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    EventLoopGroup workers = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
    ExecutorService executor =
        Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("csi-call-", 0).factory());
    NettyServerBuilder builder;
    switch (endpoint) {
      case Endpoint.Unix u -> {
        prepareSocketPath(u.path());
        builder =
            NettyServerBuilder.forAddress(new DomainSocketAddress(u.path().toString()))
                .channelType(EpollServerDomainSocketChannel.class);
      }
      case Endpoint.Tcp t -> {
        InetSocketAddress address =
            t.host().isEmpty()
                ? new InetSocketAddress(t.port())
                : new InetSocketAddress(t.host(), t.port());
        builder =
            NettyServerBuilder.forAddress(address).channelType(EpollServerSocketChannel.class);
      }
    }
    builder
        .bossEventLoopGroup(boss)
        .workerEventLoopGroup(workers)
        .executor(executor)
        .maxInboundMessageSize(4 * 1024 * 1024);
    for (BindableService s : services) {
      builder.addService(intercepted(s));
    }
    outer.forEach(builder::intercept);
    Server server = builder.build();
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      executor.shutdownNow();
      throw new IOException("cannot listen on " + endpoint + ": " + e.getMessage(), e);
    }
    if (endpoint instanceof Endpoint.Unix u) {
      Files.setPosixFilePermissions(u.path(), PosixFilePermissions.fromString("rw-rw----"));
    }
    log.info("CSI server listening on {}", endpoint);
    return new CsiServer(endpoint, server, boss, workers, executor);
  }

  /**
   * A service wrapped the way the server serves it: call logging outermost (so it logs the final
   * status), error mapping inside it.
   */
  public static ServerServiceDefinition intercepted(BindableService service) {
    return ServerInterceptors.intercept(
        service, new ErrorMappingInterceptor(), new CallLoggingInterceptor());
  }

  public Endpoint endpoint() {
    return endpoint;
  }

  /** The bound TCP port (for {@code tcp://host:0}); -1 for a unix socket. */
  public int port() {
    return endpoint instanceof Endpoint.Tcp ? server.getPort() : -1;
  }

  /**
   * Stops accepting new calls, lets in-flight calls finish for up to {@code grace}, then cancels
   * the rest, and removes the socket file.
   */
  public void shutdown(Duration grace) {
    log.info("CSI server on {} shutting down (grace {} s)", endpoint, grace.toSeconds());
    server.shutdown();
    try {
      if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn("calls still running after {} s; cancelling them", grace.toSeconds());
        server.shutdownNow();
        server.awaitTermination(2, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    executor.shutdownNow();
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    if (endpoint instanceof Endpoint.Unix u) {
      try {
        Files.deleteIfExists(u.path());
      } catch (IOException e) {
        log.warn("cannot remove socket {}: {}", u.path(), e.toString());
      }
    }
    log.info("CSI server on {} stopped", endpoint);
  }

  /** Blocks until the server has terminated. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  static void prepareSocketPath(Path socket) throws IOException {
    Path parent = socket.getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    if (!isSpecialFile(socket)) {
      throw new IOException(
          "cannot listen on "
              + socket
              + ": the path exists and is not a socket; remove it or choose another --endpoint");
    }
    if (isServing(socket)) {
      throw new IOException(
          "cannot listen on " + socket + ": another process is already serving on this socket");
    }
    log.info("removing stale socket {}", socket);
    Files.delete(socket);
  }

  /** A socket (or another special file), as opposed to a regular file or a directory. */
  private static boolean isSpecialFile(Path p) throws IOException {
    return Files.readAttributes(
            p, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
        .isOther();
  }

  private static boolean isServing(Path socket) {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}

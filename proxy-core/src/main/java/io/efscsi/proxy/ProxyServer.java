package io.efscsi.proxy;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.control.ControlServer;
import io.efscsi.proxy.json.Json;
import io.efscsi.proxy.rpc.RecordFramer;
import io.efscsi.proxy.tls.TlsContexts;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's listener on 127.0.0.1:port and everything behind it, on one epoll event loop. Every
 * kernel connection (nconnect opens several) gets its own {@link ClientSession}.
 */
public final class ProxyServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ProxyServer.class);

  /** The most one read takes from a socket. */
  static final int MAX_READ = 1024 * 1024;

  /** Read buffers of one socket: {@link ReadAllocator}. */
  static ReadAllocator recvAllocator() {
    return ReadAllocator.standard(MAX_READ);
  }

  /**
   * Whether Netty takes direct buffers from malloc without zeroing them, which needs {@code
   * --add-opens=java.base/java.nio=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true}.
   */
  static boolean unzeroedDirectBuffers() {
    return io.netty.util.internal.PlatformDependent.useDirectBufferNoCleaner();
  }

  /** The port could not be bound: the caller must not mount. */
  public static final class BindFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    BindFailedException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final ProxyConfig config;
  private final EventLoopGroup group;
  private final Channel listener;
  private final ProxyMetrics metrics;
  private final UpstreamConnector connector;
  private final TlsContexts tls;
  private ControlServer control;
  private ListenerGate gate;
  private final long startedNanos = System.nanoTime();

  private ProxyServer(
      ProxyConfig config,
      EventLoopGroup group,
      Channel listener,
      ProxyMetrics metrics,
      UpstreamConnector connector,
      TlsContexts tls) {
    this.config = config;
    this.group = group;
    this.listener = listener;
    this.metrics = metrics;
    this.connector = connector;
    this.tls = tls;
  }

  /** The listener's backlog. */
  static final int BACKLOG = 64;

  /** How often a refusing port probes its upstream: {@link ListenerGate}. */
  static final long PROBE_EVERY_MILLIS = 1_000;

  /** Binds the port and the control socket. {@code tls} is null when encryption is off. */
  public static ProxyServer start(ProxyConfig config, TlsContexts tls) throws IOException {
    return start(config, tls, () -> {});
  }

  /**
   * As {@link #start(ProxyConfig, TlsContexts)}; {@code onFatal} runs if the port stopped listening
   * during an upstream outage and cannot listen again (the caller closes the server and exits, so
   * that its supervisor starts a new one on the port).
   */
  public static ProxyServer start(ProxyConfig config, TlsContexts tls, Runnable onFatal)
      throws IOException {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    ProxyMetrics metrics = new ProxyMetrics();
    UUID id = UUID.randomUUID();
    byte[] identifier = new byte[16];
    java.nio.ByteBuffer.wrap(identifier)
        .putLong(id.getMostSignificantBits())
        .putLong(id.getLeastSignificantBits());
    UpstreamConnector connector = new UpstreamConnector(config, tls, metrics, identifier);
    UpstreamOutage outage = UpstreamOutage.standard();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(EpollServerSocketChannel.class)
            .option(ChannelOption.SO_REUSEADDR, true)
            .option(ChannelOption.SO_BACKLOG, BACKLOG)
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, UpstreamConnector.WATERMARK)
            .childOption(ChannelOption.RECVBUF_ALLOCATOR, recvAllocator())
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline()
                        .addLast("framer", new RecordFramer("client"))
                        .addLast(
                            "session",
                            new ClientSession(
                                connector,
                                metrics,
                                config.maxConnections(),
                                config.scaleUpThreshold(),
                                outage));
                  }
                });
    Channel listener;
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", config.listenPort());
    try {
      listener = b.bind(address).sync().channel();
    } catch (Exception e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw new BindFailedException(
          "cannot listen on 127.0.0.1:" + config.listenPort() + ": " + e.getMessage(), e);
    }
    ProxyServer server = new ProxyServer(config, group, listener, metrics, connector, tls);
    io.netty.channel.EventLoop loop = listener.eventLoop();
    server.gate =
        new ListenerGate(
            (EpollServerSocketChannel) listener,
            BACKLOG,
            () -> probe(connector, loop),
            outage,
            PROBE_EVERY_MILLIS,
            () -> {
              log.error("the port cannot listen again; stopping so the supervisor starts anew");
              onFatal.run();
            });
    outage.whenDown(server.gate::upstreamDown);
    if (config.controlSocket().isEmpty()) {
      return server;
    }
    try {
      server.control =
          ControlServer.start(
              group,
              config.controlSocket().get(),
              new ControlServer.Commands() {
                @Override
                public String status() {
                  return server.statusJson();
                }

                @Override
                public Future<String> ping() {
                  return NullPing.run(connector, group.next(), 10_000);
                }
              });
      return server;
    } catch (IOException e) {
      server.close();
      throw e;
    }
  }

  /** One upstream connection as a kernel connection would get it, closed again at once. */
  private static Future<?> probe(UpstreamConnector connector, io.netty.channel.EventLoop loop) {
    io.netty.util.concurrent.Promise<Void> done = loop.newPromise();
    connector
        .connect(loop, -1)
        .addListener(f -> {
          if (f.isSuccess()) {
            ((UpstreamConnector.Upstream) f.getNow()).channel().close();
            done.trySuccess(null);
          } else {
            done.tryFailure(f.cause());
          }
        });
    return done;
  }

  /** Whether the port refuses connections now because the upstream is unreachable. */
  public boolean refusing() {
    return gate != null && gate.refusing();
  }

  public ProxyMetrics metrics() {
    return metrics;
  }

  /** Status for the supervisor: version, port, upstream, partition, connections, bytes, errors. */
  public String statusJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", ProxyServer.class.getPackage().getImplementationVersion());
    m.put("pid", ProcessHandle.current().pid());
    m.put("port", config.listenPort());
    m.put("upstream", config.upstreamHost() + ":" + config.upstreamPort());
    m.put("tls", config.tls() ? tls.provider() : "off");
    m.put("bind", config.bind().name());
    m.put("direct_buffers", unzeroedDirectBuffers() ? "malloc" : "allocateDirect");
    m.put("direct_memory_bytes", io.netty.util.internal.PlatformDependent.usedDirectMemory());
    m.put("direct_memory_limit_bytes", io.netty.util.internal.PlatformDependent.maxDirectMemory());
    m.put("accepting", !refusing());
    m.put("refusals", gate == null ? 0 : gate.refusals());
    m.put("uptime_seconds", (System.nanoTime() - startedNanos) / 1_000_000_000L);
    m.putAll(metrics.snapshot());
    return Json.line(m);
  }

  public EventLoopGroup group() {
    return group;
  }

  @Override
  public void close() {
    if (control != null) {
      control.close();
    }
    if (gate != null) {
      gate.detach();
    }
    listener.close().syncUninterruptibly(); // close(2) only: a handed-over socket keeps listening
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    log.info("proxy on 127.0.0.1:{} stopped", config.listenPort());
  }
}

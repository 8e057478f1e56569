package io.efscsi.proxy;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyEnv;
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
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's listener on 127.0.0.1:port and everything behind it, on one epoll event loop. Every
 * kernel connection (nconnect opens several) gets its own {@link ClientSession}. The listener is
 * bound here, or inherited from the proxy it replaces ({@link Handover}).
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

  /** Why a server asks its process to stop (besides SIGTERM). */
  public enum Stop {
    /** The port stopped listening during an upstream outage and could not listen again. */
    LISTEN_LOST,
    /** Told {@code drain}: its kernel connections are closed, another proxy serves the port. */
    DRAINED,
    /** On an inherited listener, not told {@code serve} in time. */
    STANDBY_EXPIRED
  }

  private final ProxyConfig config;
  private final ProxyEnv env;
  private final EventLoopGroup group;
  private final EpollServerSocketChannel listener;
  private final ProxyMetrics metrics;
  private final UpstreamConnector connector;
  private final TlsContexts tls;
  private ControlServer control;
  private ListenerGate gate;
  private Handover handover;
  private final long startedNanos = System.nanoTime();

  private ProxyServer(
      ProxyConfig config,
      ProxyEnv env,
      EventLoopGroup group,
      EpollServerSocketChannel listener,
      ProxyMetrics metrics,
      UpstreamConnector connector,
      TlsContexts tls) {
    this.config = config;
    this.env = env;
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
    return start(config, ProxyEnv.NONE, tls, stop -> {});
  }

  /**
   * As {@link #start(ProxyConfig, TlsContexts)}, on the listener {@code env} hands over if it names
   * one (in standby until {@code serve}). {@code onStop} is told when the server wants its process
   * to stop: the caller closes the server and exits ({@link Stop#LISTEN_LOST}: so that its
   * supervisor starts a new proxy on the port).
   *
   * @throws BindFailedException the port cannot be bound, or the inherited listener is not a TCP
   *     socket listening on 127.0.0.1:listen.port
   */
  public static ProxyServer start(
      ProxyConfig config, ProxyEnv env, TlsContexts tls, Consumer<Stop> onStop) throws IOException {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    ProxyMetrics metrics = new ProxyMetrics();
    UUID id = UUID.randomUUID();
    byte[] identifier = new byte[16];
    java.nio.ByteBuffer.wrap(identifier)
        .putLong(id.getMostSignificantBits())
        .putLong(id.getLeastSignificantBits());
    UpstreamConnector connector = new UpstreamConnector(config, tls, metrics, identifier);
    UpstreamOutage outage = UpstreamOutage.standard();
    Sessions sessions = new Sessions();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
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
                                outage,
                                sessions));
                  }
                });
    EpollServerSocketChannel listener;
    try {
      listener = listen(b, config, env);
    } catch (BindFailedException e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
    ProxyServer server = new ProxyServer(config, env, group, listener, metrics, connector, tls);
    io.netty.channel.EventLoop loop = listener.eventLoop();
    server.gate =
        new ListenerGate(
            listener,
            BACKLOG,
            () -> probe(connector, loop),
            outage,
            PROBE_EVERY_MILLIS,
            () -> {
              log.error("the port cannot listen again; stopping so the supervisor starts anew");
              onStop.accept(Stop.LISTEN_LOST);
            });
    outage.whenDown(server.gate::upstreamDown);
    boolean inherited = env.listenFd().isPresent();
    server.handover = new Handover(listener, BACKLOG, server.gate, sessions, !inherited, onStop);
    if (inherited) {
      server.handover.expireStandby(env.standbyTimeout());
    }
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

                @Override
                public Future<String> serve() {
                  return server.handover.serve();
                }

                @Override
                public Future<String> drain() {
                  return server.handover.drain();
                }

                @Override
                public Future<String> release() {
                  return server.handover.release();
                }
              });
      return server;
    } catch (IOException e) {
      server.close();
      throw e;
    }
  }

  /**
   * Binds 127.0.0.1:listen.port, or takes over the listener {@code env} names: checked, registered
   * with accepting off (standby) and without touching the socket's options.
   */
  private static EpollServerSocketChannel listen(
      ServerBootstrap b, ProxyConfig config, ProxyEnv env) throws BindFailedException {
    if (env.listenFd().isPresent()) {
      EpollServerSocketChannel inherited =
          ListenerSocket.adopt(env.listenFd().getAsInt(), config.listenPort());
      try {
        return (EpollServerSocketChannel)
            b.channelFactory(
                    (io.netty.channel.ChannelFactory<EpollServerSocketChannel>) () -> inherited)
                .option(ChannelOption.AUTO_READ, false)
                .register()
                .sync()
                .channel();
      } catch (Exception e) {
        throw new BindFailedException(
            "cannot serve inherited listener fd "
                + env.listenFd().getAsInt()
                + " on 127.0.0.1:"
                + config.listenPort()
                + ": "
                + e.getMessage(),
            e);
      }
    }
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", config.listenPort());
    try {
      return (EpollServerSocketChannel)
          b.channel(EpollServerSocketChannel.class)
              .option(ChannelOption.SO_REUSEADDR, true)
              .option(ChannelOption.SO_BACKLOG, BACKLOG)
              .bind(address)
              .sync()
              .channel();
    } catch (Exception e) {
      throw new BindFailedException(
          "cannot listen on 127.0.0.1:" + config.listenPort() + ": " + e.getMessage(), e);
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
    m.put("build", env.build());
    m.put("listener", env.listenFd().isPresent() ? "inherited" : "bound");
    m.put("serving", handover.serving());
    m.put("draining", handover.draining());
    m.put("released", handover.released());
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

  /** This process's descriptor of the listening socket (tests duplicate it). */
  int listenerFd() {
    return ListenerSocket.fd(listener);
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

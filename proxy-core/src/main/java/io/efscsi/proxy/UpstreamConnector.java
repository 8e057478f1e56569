package io.efscsi.proxy;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.efscsi.proxy.dial.Dialer;
import io.efscsi.proxy.dial.Family;
import io.efscsi.proxy.dial.HostLookup;
import io.efscsi.proxy.rpc.BindHandler;
import io.efscsi.proxy.rpc.PartitionBinding;
import io.efscsi.proxy.tls.TlsContexts;
import io.efscsi.proxy.util.Causes;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens upstream connections: TCP to the mount target ({@link Dialer}: its name resolved again for
 * every connection and both families raced, Happy Eyeballs; an IP as given), keepalive and
 * TCP_USER_TIMEOUT so a dead peer is found in seconds, TLS first in the pipeline when encryption is
 * on (SNI and hostname check against the file system's name; never a plaintext fallback), then
 * BindClientToPartition. The result is a connected channel with AUTO_READ off and the bind reply.
 */
public final class UpstreamConnector implements ClientSession.Connector {

  private static final Logger log = LoggerFactory.getLogger(UpstreamConnector.class);

  /**
   * Plaintext encrypted per wrap of the TLS handler: four 16 KiB records into one buffer and one
   * write, instead of Netty's default of one record each (fewer buffers, iterations and iovecs;
   * upload CPU 0.67-0.74 against 0.77-0.81 s/GiB in paired runs, docs/proxy.md). Well under the
   * high watermark, so one wrap never makes the upstream unwritable by itself.
   */
  static final int WRAP_BYTES = 64 * 1024;

  /** Low/high write watermarks per connection: the ceiling on bytes queued in the proxy. */
  static final WriteBufferWaterMark WATERMARK = new WriteBufferWaterMark(64 * 1024, 256 * 1024);

  /** The TLS handshake failed (untrusted, wrong name, expired): trying again will not help. */
  public static final class TlsFailedException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    TlsFailedException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** A connected, bound (or knowingly unbound) upstream. */
  public record Upstream(Channel channel, PartitionBinding.Reply bind) {}

  private final ProxyConfig config;
  private final TlsContexts tls;
  private final ProxyMetrics metrics;
  private final byte[] identifier;
  private final Dialer dialer;

  /** How long TCP to the mount target may take, all addresses of its name together. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  /**
   * After a server refused the bind RPC, skip it for a while instead of paying a reconnect each
   * time.
   */
  private static final long UNBOUND_FOR_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(5);

  private volatile long unboundUntil = Long.MIN_VALUE;

  public UpstreamConnector(
      ProxyConfig config, TlsContexts tls, ProxyMetrics metrics, byte[] identifier) {
    this(config, tls, metrics, identifier, HostLookup.SYSTEM);
  }

  /** As the other constructor; {@code lookup} resolves the mount target's name. */
  public UpstreamConnector(
      ProxyConfig config,
      TlsContexts tls,
      ProxyMetrics metrics,
      byte[] identifier,
      HostLookup lookup) {
    this.config = config;
    this.tls = tls;
    this.metrics = metrics;
    this.identifier = identifier.clone();
    this.dialer =
        new Dialer(
            config.upstreamHost(),
            config.upstreamPort(),
            config.connectAttemptDelay(),
            CONNECT_TIMEOUT,
            lookup);
  }

  /**
   * Connects and binds. A server that does not know the bind RPC gets a fresh connection that is
   * not bound (efs-proxy's fallback).
   */
  @Override
  public Future<Upstream> connect(EventLoop loop, long incarnation) {
    Promise<Upstream> done = loop.newPromise();
    long until = unboundUntil;
    boolean skipBind = until != Long.MIN_VALUE && System.nanoTime() - until < 0;
    attempt(loop, incarnation, skipBind ? BindProtocol.NONE : config.bind(), done);
    return done;
  }

  private void attempt(
      EventLoop loop, long incarnation, BindProtocol protocol, Promise<Upstream> done) {
    dialer
        .dial(bootstrap(), loop)
        .addListener(f -> {
          if (!f.isSuccess()) {
            fail(done, "cannot connect to " + target() + ": " + f.cause().getMessage(), f.cause());
            return;
          }
          Dialer.Dialed dialed = (Dialer.Dialed) f.getNow();
          count(dialed);
          handshake(dialed.channel(), loop, incarnation, protocol, done);
        });
  }

  /** TCP options of upstream sockets; the connect timeout is the dialer's. */
  private Bootstrap bootstrap() {
    return new Bootstrap()
        .channel(EpollSocketChannel.class)
        .option(ChannelOption.AUTO_READ, false)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.SO_KEEPALIVE, true)
        .option(EpollChannelOption.TCP_KEEPIDLE, (int) config.keepAliveIdle().toSeconds())
        .option(EpollChannelOption.TCP_KEEPINTVL, (int) config.keepAliveInterval().toSeconds())
        .option(EpollChannelOption.TCP_KEEPCNT, config.keepAliveCount())
        .option(EpollChannelOption.TCP_USER_TIMEOUT, (int) config.tcpUserTimeout().toMillis())
        .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATERMARK)
        .option(ChannelOption.RECVBUF_ALLOCATOR, ProxyServer.recvAllocator());
  }

  private void count(Dialer.Dialed dialed) {
    (dialed.family() == Family.IPV6 ? metrics.upstreamConnectsIpv6 : metrics.upstreamConnectsIpv4)
        .increment();
    if (dialed.fellBack()) {
      metrics.upstreamConnectFallbacks.increment();
    }
  }

  /** On the connection that won the race: TLS (first in the pipeline), then the bind. */
  private void handshake(
      Channel ch, EventLoop loop, long incarnation, BindProtocol protocol, Promise<Upstream> done) {
    Promise<PartitionBinding.Reply> bound = loop.newPromise();
    if (config.tls()) {
      ch.pipeline().addLast("tls", sslHandler(ch));
    }
    if (protocol != BindProtocol.NONE) {
      ch.pipeline()
          .addLast(
              "bind",
              new BindHandler(
                  protocol, identifier, incarnation, config.tls(), config.bindTimeout(), bound));
    }
    if (protocol == BindProtocol.NONE) {
      if (config.tls()) {
        ch.pipeline()
            .get(SslHandler.class)
            .handshakeFuture()
            .addListener(h -> {
              if (h.isSuccess()) {
                succeed(done, ch, new PartitionBinding.Reply.Unsupported("binding off"));
              } else {
                tlsFailed(done, ch, h.cause());
              }
            });
      } else {
        succeed(done, ch, new PartitionBinding.Reply.Unsupported("binding off"));
      }
      return;
    }
    bound.addListener(r -> {
      if (r.isSuccess()) {
        PartitionBinding.Reply reply = bound.getNow();
        if (reply instanceof PartitionBinding.Reply.Unsupported u
            && config.bind() != BindProtocol.NONE) {
          metrics.bindUnsupported.increment();
          unboundUntil = System.nanoTime() + UNBOUND_FOR_NANOS;
          log.info(
              "{} does not bind partitions ({}); using an unbound tunnel", target(), u.reason());
          ch.close();
          attempt(loop, incarnation, BindProtocol.NONE, done);
          return;
        }
        succeed(done, ch, reply);
      } else if (config.tls() && !handshakeDone(ch)) {
        tlsFailed(done, ch, r.cause());
      } else {
        ch.close();
        fail(done, "binding to " + target() + " failed: " + r.cause().getMessage(), r.cause());
      }
    });
  }

  private static boolean handshakeDone(Channel ch) {
    SslHandler h = ch.pipeline().get(SslHandler.class);
    return h != null && h.handshakeFuture().isSuccess();
  }

  private SslHandler sslHandler(Channel ch) {
    SslHandler h = tls.current().newHandler(ch.alloc(), config.serverName(), config.upstreamPort());
    // Apply the engine's parameters back to it, as before the name check moved into
    // ServerNameTrustManager: Netty's OpenSSL engine then also sets BoringSSL's key exchange groups
    // from them (SSL.setCurvesList). Without this call TLS reads measured 229 vs 396 MiB/s against
    // the previous build (tlsab, same run); with it 343 vs 356. The cause is not understood yet.
    SSLParameters params = h.engine().getSSLParameters();
    h.engine().setSSLParameters(params);
    h.setHandshakeTimeoutMillis(10_000);
    return batched(h);
  }

  /** Encrypts up to {@link #WRAP_BYTES} per wrap (records stay 16 KiB, the TLS maximum). */
  static SslHandler batched(SslHandler h) {
    h.setWrapDataSize(WRAP_BYTES);
    return h;
  }

  private void succeed(Promise<Upstream> done, Channel ch, PartitionBinding.Reply reply) {
    metrics.upstreamConnections.increment();
    metrics.activeUpstreams.incrementAndGet();
    ch.closeFuture().addListener(f -> metrics.activeUpstreams.decrementAndGet());
    if (reply instanceof PartitionBinding.Reply.Bound bound) {
      metrics.partition = bound.partitionHex();
    }
    if (!done.trySuccess(new Upstream(ch, reply))) {
      ch.close();
    }
  }

  private void tlsFailed(Promise<Upstream> done, Channel ch, Throwable cause) {
    metrics.tlsHandshakeFailures.increment();
    String message =
        "TLS handshake with "
            + target()
            + " (server name "
            + config.serverName()
            + ") failed: "
            + Causes.rootMessage(cause);
    log.error(message);
    ch.close();
    metrics.upstreamFailures.increment();
    metrics.lastError = message;
    done.tryFailure(new TlsFailedException(message, cause));
  }

  private void fail(Promise<Upstream> done, String message, Throwable cause) {
    metrics.upstreamFailures.increment();
    metrics.lastError = message;
    done.tryFailure(new java.io.IOException(message, cause));
  }

  String target() {
    return config.upstreamHost() + ":" + config.upstreamPort();
  }
}

package io.efscsi.proxy;

import io.efscsi.proxy.rpc.OutstandingCalls;
import io.efscsi.proxy.rpc.PartitionBinding;
import io.efscsi.proxy.rpc.RecordChunk;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One kernel NFS connection and its upstream connections (an "incarnation"). Requests are steered
 * whole-record, round-robin, to the upstreams; replies and server callbacks come back from any of
 * them, interleaved only at record boundaries. All of it runs on the client channel's event loop.
 *
 * <p>Backpressure: the client is read only while the upstream being written can take more (write
 * watermarks), and an upstream is read only while the client can take more, so a backlog flushed by
 * the kernel after an outage waits in socket buffers, not in this process.
 *
 * <p>Over 400 lines because steering, scale-up, the reply interleaving, backpressure and draining
 * are one state machine over the same fields (the upstreams, the one that owns the reply stream,
 * the paused, closing and draining flags), changed on one event loop without locks; the framing
 * ({@code RecordFramer}), counting the replies due ({@code OutstandingCalls}), the upstream side
 * ({@link UpstreamHandler}), connecting ({@link UpstreamConnector}) and the set of sessions ({@link
 * Sessions}) already live apart.
 */
final class ClientSession extends ChannelInboundHandlerAdapter {

  private static final Logger log = LoggerFactory.getLogger(ClientSession.class);
  private static final AtomicLong INCARNATIONS = new AtomicLong();
  private static final long SCALE_UP_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(300);

  /** How long a client connection being closed may take to close its end before it is cut. */
  static final long CLOSE_GRACE_MILLIS = 5_000;

  /** Opens bound upstream connections; {@link UpstreamConnector} in production. */
  interface Connector {
    io.netty.util.concurrent.Future<UpstreamConnector.Upstream> connect(
        io.netty.channel.EventLoop loop, long incarnation);
  }

  private final Connector connector;
  private final java.util.function.LongSupplier nanoTime;
  private final ProxyMetrics metrics;
  private final int maxConnections;
  private final long threshold;
  private final long incarnation = INCARNATIONS.incrementAndGet();
  private final List<UpstreamHandler> upstreams = new ArrayList<>();
  private Channel client;
  private UpstreamHandler target;
  private int next;
  private boolean clientPaused;
  private long pausedSince;
  private UpstreamHandler replyOwner;
  private final List<UpstreamHandler> waitingToReply = new ArrayList<>();
  private byte[] partition;
  private PartitionBinding.ScaleUp scaleUp = PartitionBinding.ScaleUp.DEFAULT;
  private ScheduledFuture<?> meter;
  private long lastBytes;
  private long lastMeterNanos;
  private long breachedSince = -1;
  private boolean scaling;
  private long scaleUpNotBefore;
  private long bytes;
  private boolean closing;
  private boolean draining;
  private final OutstandingCalls calls = new OutstandingCalls();
  private UpstreamOutage outage = UpstreamOutage.standard();
  private Sessions sessions = new Sessions();

  /**
   * @param maxConnections upper bound on upstream connections (the server's limit applies too)
   * @param threshold bytes per second above which to scale up; 0 = the server's threshold
   */
  ClientSession(Connector connector, ProxyMetrics metrics, int maxConnections, long threshold) {
    this(connector, metrics, maxConnections, threshold, System::nanoTime);
  }

  ClientSession(
      Connector connector,
      ProxyMetrics metrics,
      int maxConnections,
      long threshold,
      UpstreamOutage outage,
      Sessions sessions) {
    this(connector, metrics, maxConnections, threshold, System::nanoTime);
    this.outage = outage;
    this.sessions = sessions;
  }

  ClientSession(
      Connector connector,
      ProxyMetrics metrics,
      int maxConnections,
      long threshold,
      java.util.function.LongSupplier nanoTime) {
    this.connector = connector;
    this.nanoTime = nanoTime;
    this.metrics = metrics;
    this.maxConnections = maxConnections;
    this.threshold = threshold;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    client = ctx.channel();
    metrics.clientConnections.increment();
    metrics.activeClients.incrementAndGet();
    sessions.opened(this);
    connector
        .connect(client.eventLoop(), incarnation)
        .addListener(f -> {
          if (!f.isSuccess()) {
            log.debug("incarnation {}: no upstream: {}", incarnation, f.cause().getMessage());
            outage.failed(f.cause().getMessage());
            closeClient();
            return;
          }
          outage.succeeded();
          UpstreamConnector.Upstream up = (UpstreamConnector.Upstream) f.getNow();
          if (!client.isActive() || closing) {
            up.channel().close();
            return;
          }
          if (up.bind() instanceof PartitionBinding.Reply.Bound b) {
            partition = b.partitionId();
          }
          scaleUp = up.bind().scaleUp();
          add(up.channel());
          log.debug("incarnation {}: upstream ready ({})", incarnation, describe(up.bind()));
          lastMeterNanos = nanoTime.getAsLong();
          meter = client.eventLoop().scheduleAtFixedRate(this::meter, 1, 1, TimeUnit.SECONDS);
          client.read();
        });
    ctx.fireChannelActive();
  }

  private void add(Channel upstream) {
    UpstreamHandler h = new UpstreamHandler(this, upstream, metrics);
    upstream.pipeline().addLast("framer", new io.efscsi.proxy.rpc.RecordFramer("server"));
    upstream.pipeline().addLast("relay", h);
    upstreams.add(h);
    upstream.closeFuture().addListener(f -> upstreamClosed(h));
    upstream.read();
  }

  // ---- client -> server

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    RecordChunk chunk = (RecordChunk) msg;
    if (closing || draining || upstreams.isEmpty()) {
      chunk.release(); // a draining session sends nothing more; the kernel resends on reconnect
      return;
    }
    if (chunk.start() || target == null) {
      target = upstreams.get(next++ % upstreams.size());
    }
    int n = chunk.content().readableBytes();
    metrics.bytesToServer.add(n);
    bytes += n;
    if (chunk.end()) {
      metrics.recordsToServer.increment();
    }
    calls.sent(chunk);
    target.channel.write(chunk.content(), target.channel.voidPromise());
    target.dirty = true;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (closing) {
      client.read();
      return;
    }
    if (draining) {
      return;
    }
    boolean blocked = false;
    for (UpstreamHandler u : upstreams) {
      if (u.dirty) {
        u.dirty = false;
        u.channel.flush();
      }
      blocked |= !u.channel.isWritable();
    }
    if (blocked) {
      pauseClient();
    } else {
      client.read();
    }
  }

  private void pauseClient() {
    if (!clientPaused) {
      clientPaused = true;
      pausedSince = nanoTime.getAsLong();
    }
  }

  /** An upstream drained below its low watermark. */
  void upstreamWritable() {
    if (!clientPaused) {
      return;
    }
    for (UpstreamHandler u : upstreams) {
      if (!u.channel.isWritable()) {
        return;
      }
    }
    clientPaused = false;
    metrics.pausedNanos.add(nanoTime.getAsLong() - pausedSince);
    if (!draining) {
      client.read();
    }
  }

  // ---- server -> client

  /** A chunk from an upstream; false when it must wait because another upstream is mid-record. */
  boolean reply(UpstreamHandler from, RecordChunk chunk) {
    if (closing) {
      chunk.release();
      return true;
    }
    if (replyOwner != null && replyOwner != from) {
      return false;
    }
    replyOwner = chunk.end() ? null : from;
    int n = chunk.content().readableBytes();
    metrics.bytesToClient.add(n);
    bytes += n;
    if (chunk.end()) {
      metrics.recordsToClient.increment();
    }
    calls.relayed(chunk);
    client.write(chunk.content(), client.voidPromise());
    if (draining && chunk.end() && calls.outstanding() == 0) {
      closeClient(); // the last reply due: flushed, then a FIN
    } else if (replyOwner == null && !waitingToReply.isEmpty()) {
      client.eventLoop().execute(this::releaseWaiting);
    }
    return true;
  }

  void waitToReply(UpstreamHandler u) {
    if (!waitingToReply.contains(u)) {
      waitingToReply.add(u);
    }
  }

  private void releaseWaiting() {
    while (replyOwner == null && !waitingToReply.isEmpty()) {
      waitingToReply.removeFirst().deliverPending();
    }
    client.flush();
  }

  boolean clientWritable() {
    return client.isWritable();
  }

  void flushClient() {
    client.flush();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (client.isWritable()) {
      for (UpstreamHandler u : upstreams) {
        u.clientWritable();
      }
    }
    ctx.fireChannelWritabilityChanged();
  }

  // ---- scale-up: more connections on the same partition once throughput passes the threshold

  private void meter() {
    long now = nanoTime.getAsLong();
    double seconds = (now - lastMeterNanos) / 1e9;
    long rate = (long) ((bytes - lastBytes) / Math.max(seconds, 1e-3));
    lastBytes = bytes;
    lastMeterNanos = now;
    int limit = Math.min(maxConnections, scaleUp.maxConnections());
    if (scaling
        || draining
        || upstreams.size() != 1
        || limit <= 1
        || partition == null
        || now < scaleUpNotBefore) {
      return;
    }
    if (rate < (threshold > 0 ? threshold : scaleUp.bytesPerSecondThreshold())) {
      breachedSince = -1;
      return;
    }
    if (breachedSince < 0) {
      breachedSince = now;
    }
    if (now - breachedSince >= TimeUnit.SECONDS.toNanos(Math.max(scaleUp.breachedSeconds(), 1))) {
      scale(limit - 1);
    }
  }

  private void scale(int extra) {
    scaling = true;
    metrics.scaleUps.increment();
    log.info(
        "incarnation {}: throughput over the threshold; adding {} connections", incarnation, extra);
    new ScaleUpSearch(this, connector, metrics).start();
  }

  // ---- what a ScaleUpSearch sees of its session

  Channel client() {
    return client;
  }

  long incarnation() {
    return incarnation;
  }

  byte[] partition() {
    return partition;
  }

  /** How many upstream connections the session may have: ours and the server's limit. */
  int connectionLimit() {
    return Math.min(maxConnections, scaleUp.maxConnections());
  }

  /** A scale-up connection on our partition joins the round-robin. */
  void joined(Channel upstream, PartitionBinding.ScaleUp config) {
    scaleUp = config;
    add(upstream);
  }

  /** The server's answer ended the search; its scale-up settings apply from now on. */
  void adopt(PartitionBinding.ScaleUp config) {
    scaleUp = config;
  }

  /** The search is over; with nothing added, the next one waits. */
  void searchFinished() {
    scaling = false;
    if (upstreams.size() == 1) {
      scaleUpNotBefore = nanoTime.getAsLong() + SCALE_UP_BACKOFF_NANOS;
    }
  }

  int upstreamCount() {
    return upstreams.size();
  }

  // ---- drain: the proxy hands its port to another one and leaves

  /**
   * Stops reading the kernel's connection; once every call already passed upstream has its reply
   * written back, ends the connection with a FIN ({@link #closeClient}). The kernel reconnects (to
   * the proxy that serves the port now) and resends what got no reply. {@link Sessions} bounds the
   * wait.
   */
  void drain() {
    if (draining || closing) {
      return;
    }
    draining = true;
    log.debug("incarnation {}: draining, {} replies still due", incarnation, calls.outstanding());
    if (calls.outstanding() == 0 || upstreams.isEmpty()) {
      closeClient();
    }
  }

  // ---- teardown: any upstream lost ends the incarnation; the kernel reconnects

  private void upstreamClosed(UpstreamHandler h) {
    if (client != null && client.isActive()) {
      log.info(
          "incarnation {}: an upstream connection closed; closing the client connection",
          incarnation);
      closeClient();
    }
    upstreams.remove(h);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    metrics.activeClients.decrementAndGet();
    sessions.closed(this);
    if (meter != null) {
      meter.cancel(false);
    }
    for (UpstreamHandler u : List.copyOf(upstreams)) {
      closeOnFlush(u.channel);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof java.io.IOException
        && String.valueOf(cause.getMessage()).contains("reset by peer")) {
      log.debug("incarnation {}: client reset the connection", incarnation);
    } else {
      log.warn("incarnation {}: client connection failed: {}", incarnation, cause.getMessage());
      metrics.lastError = "client: " + cause.getMessage();
    }
    closeOnFlush(ctx.channel());
  }

  /**
   * Ends the kernel's connection with a FIN, never an RST. The kernel sends its call as soon as it
   * is connected, before the upstream is ready, and closing a socket that holds unread bytes makes
   * Linux answer with an RST. The kernel's RPC client takes ECONNRESET as "reconnect at once" and
   * skips its timeout check for it (net/sunrpc/clnt.c, call_status): with the upstream gone it then
   * reconnected to us hundreds of times a second, and a soft mount's call reached EIO only when a
   * wake-up happened to carry another error (15 s to minutes instead of the major timeout). A FIN
   * puts the transport into its reconnect backoff and lets the timeout be checked while it is
   * disconnected. So: flush what is queued for the kernel, shut our output, read and drop what the
   * kernel still sends until it closes its end (then the channel closes), and cut the connection if
   * that takes longer than {@link #CLOSE_GRACE_MILLIS}.
   */
  void closeClient() {
    if (closing) {
      return;
    }
    closing = true;
    if (!(client instanceof DuplexChannel duplex) || !client.isActive()) {
      closeOnFlush(client);
      return;
    }
    client
        .writeAndFlush(Unpooled.EMPTY_BUFFER)
        .addListener(f -> {
          if (!f.isSuccess() || !client.isActive()) {
            client.close();
            return;
          }
          duplex
              .shutdownOutput()
              .addListener(s -> {
                if (!s.isSuccess()) {
                  client.close();
                }
              });
        });
    client.eventLoop().schedule(() -> client.close(), CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    client.read();
  }

  static void closeOnFlush(Channel ch) {
    if (ch.isActive()) {
      ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    } else {
      ch.close();
    }
  }

  static String describe(PartitionBinding.Reply r) {
    return switch (r) {
      case PartitionBinding.Reply.Bound b ->
          (b.ready() ? "READY" : "PREFERRED")
              + " partition "
              + b.partitionHex().substring(0, 16)
              + "…";
      case PartitionBinding.Reply.Retry x ->
          (x.later() ? "RETRY_LATER" : "RETRY") + " " + x.message();
      case PartitionBinding.Reply.Failed x -> "ERROR " + x.message();
      case PartitionBinding.Reply.Unsupported x -> "unbound: " + x.reason();
    };
  }
}

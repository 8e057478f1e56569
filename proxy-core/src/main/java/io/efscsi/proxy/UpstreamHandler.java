package io.efscsi.proxy;

import io.efscsi.proxy.rpc.RecordChunk;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay end on one upstream connection: server records go to the client, the chunks of one read
 * are held while another upstream finishes its record, and the upstream is read only while the
 * client can take more.
 */
final class UpstreamHandler extends ChannelInboundHandlerAdapter {

  private static final Logger log = LoggerFactory.getLogger(UpstreamHandler.class);

  final Channel channel;
  private final ClientSession session;
  private final ProxyMetrics metrics;
  boolean dirty;

  /** Chunks of this upstream's next record, held while another upstream finishes its record. */
  private final java.util.ArrayDeque<RecordChunk> pending = new java.util.ArrayDeque<>();

  private boolean paused;

  UpstreamHandler(ClientSession session, Channel channel, ProxyMetrics metrics) {
    this.session = session;
    this.channel = channel;
    this.metrics = metrics;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    RecordChunk chunk = (RecordChunk) msg;
    if (!pending.isEmpty() || !session.reply(this, chunk)) {
      pending.addLast(chunk);
      session.waitToReply(this);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    session.flushClient();
    resume();
  }

  /** Called when the record owner finished: deliver the held chunk, then read on. */
  void deliverPending() {
    while (!pending.isEmpty()) {
      if (!session.reply(this, pending.peekFirst())) {
        session.waitToReply(this);
        return;
      }
      pending.removeFirst();
    }
    resume();
  }

  void clientWritable() {
    if (paused) {
      resume();
    }
  }

  private void resume() {
    if (!pending.isEmpty()) {
      return;
    }
    if (session.clientWritable()) {
      paused = false;
      channel.read();
    } else {
      paused = true;
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (channel.isWritable()) {
      session.upstreamWritable();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    while (!pending.isEmpty()) {
      pending.removeFirst().release();
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.warn("upstream {} failed: {}", channel.remoteAddress(), cause.getMessage());
    metrics.upstreamFailures.increment();
    metrics.lastError = "upstream: " + cause.getMessage();
    ClientSession.closeOnFlush(channel);
  }
}

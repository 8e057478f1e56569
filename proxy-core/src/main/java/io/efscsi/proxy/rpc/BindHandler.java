package io.efscsi.proxy.rpc;

import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Sends BindClientToPartition as the first record of an upstream connection (after the TLS
 * handshake when there is one), reads the one reply record, completes {@code result} and removes
 * itself. Nothing else is read or written on the connection until then.
 */
public final class BindHandler extends ChannelInboundHandlerAdapter {

  private static final int MAX_REPLY = 64 * 1024;

  private final BindProtocol protocol;
  private final byte[] identifier;
  private final long incarnation;
  private final boolean waitForTls;
  private final Duration timeout;
  private final Promise<PartitionBinding.Reply> result;
  private final int xid = ThreadLocalRandom.current().nextInt();
  private ByteBuf reply;
  private ScheduledFuture<?> timer;
  private boolean sent;

  public BindHandler(
      BindProtocol protocol,
      byte[] identifier,
      long incarnation,
      boolean waitForTls,
      Duration timeout,
      Promise<PartitionBinding.Reply> result) {
    this.protocol = protocol;
    this.identifier = identifier.clone();
    this.incarnation = incarnation;
    this.waitForTls = waitForTls;
    this.timeout = timeout;
    this.result = result;
  }

  /** Added to a connection that is already up (the winner of a connection race): send now. */
  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    if (ctx.channel().isActive() && !waitForTls) {
      send(ctx);
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (!waitForTls) {
      send(ctx);
    }
    ctx.fireChannelActive();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof SslHandshakeCompletionEvent e && waitForTls) {
      if (e.isSuccess()) {
        send(ctx);
      } else {
        result.tryFailure(e.cause());
      }
    }
    ctx.fireUserEventTriggered(evt);
  }

  private void send(ChannelHandlerContext ctx) {
    if (sent) {
      return;
    }
    sent = true;
    timer =
        ctx.executor()
            .schedule(
                () -> {
                  if (result.tryFailure(
                      new OncRpc.RpcException(
                          "no BindClientToPartition reply within " + timeout.toMillis() + " ms"))) {
                    ctx.close();
                  }
                },
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
    ctx.writeAndFlush(PartitionBinding.call(ctx.alloc(), protocol, xid, identifier, incarnation))
        .addListener(f -> {
          if (!f.isSuccess()) {
            result.tryFailure(f.cause());
          }
        });
    ctx.read();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf in = (ByteBuf) msg;
    if (reply == null) {
      reply = ctx.alloc().buffer(256);
    }
    reply.writeBytes(in);
    in.release();
    if (reply.readableBytes() < 4) {
      ctx.read();
      return;
    }
    int mark = reply.getInt(reply.readerIndex());
    int length = mark & 0x7fff_ffff;
    if ((mark & 0x8000_0000) == 0 || length > MAX_REPLY) {
      fail(ctx, "bad BindClientToPartition reply record mark 0x" + Integer.toHexString(mark));
      return;
    }
    if (reply.readableBytes() < 4 + length) {
      ctx.read();
      return;
    }
    reply.skipBytes(4);
    ByteBuf body = reply.readSlice(length);
    PartitionBinding.Reply parsed;
    try {
      parsed = PartitionBinding.parse(body, xid, protocol);
    } catch (OncRpc.RpcException e) {
      fail(ctx, "bad BindClientToPartition reply: " + e.getMessage());
      return;
    }
    ByteBuf rest = reply.isReadable() ? reply.retainedSlice() : null;
    cleanup();
    ctx.pipeline().remove(this);
    result.trySuccess(parsed);
    if (rest != null) {
      ctx.fireChannelRead(rest);
    }
  }

  private void fail(ChannelHandlerContext ctx, String message) {
    cleanup();
    result.tryFailure(new OncRpc.RpcException(message));
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cleanup();
    result.tryFailure(new OncRpc.RpcException("connection closed before the bind reply"));
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    cleanup();
    result.tryFailure(cause);
    ctx.close();
  }

  private void cleanup() {
    if (timer != null) {
      timer.cancel(false);
    }
    if (reply != null) {
      reply.release();
      reply = null;
    }
  }
}

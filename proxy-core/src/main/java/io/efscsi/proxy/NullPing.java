package io.efscsi.proxy;

import io.efscsi.proxy.rpc.OncRpc;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * An NFS NULL call (program 100003, version 4, procedure 0) through a fresh upstream connection:
 * proves DNS, TCP, TLS, the bind and the NFS server answer, without touching any mount.
 */
public final class NullPing {

  private NullPing() {}

  /** The ping's answer ({@code ok <ms>}) or its failure, on {@code loop}. */
  public static Future<String> run(
      UpstreamConnector connector, EventLoop loop, long timeoutMillis) {
    Promise<String> done = loop.newPromise();
    long t0 = System.nanoTime();
    loop.schedule(
        () -> done.tryFailure(new java.io.IOException("no answer within " + timeoutMillis + " ms")),
        timeoutMillis,
        TimeUnit.MILLISECONDS);
    connector
        .connect(loop, -1)
        .addListener(f -> {
          if (!f.isSuccess()) {
            done.tryFailure(f.cause());
            return;
          }
          Channel ch = ((UpstreamConnector.Upstream) f.getNow()).channel();
          done.addListener(x -> ch.close());
          int xid = ThreadLocalRandom.current().nextInt();
          ch.pipeline()
              .addLast(
                  new ChannelInboundHandlerAdapter() {
                    private ByteBuf acc;

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                      ByteBuf in = (ByteBuf) msg;
                      if (acc == null) {
                        acc = ctx.alloc().buffer(64);
                      }
                      acc.writeBytes(in);
                      in.release();
                      if (acc.readableBytes() >= 4
                          && acc.readableBytes() >= 4 + (acc.getInt(0) & 0x7fff_ffff)) {
                        acc.skipBytes(4);
                        try {
                          int status = OncRpc.acceptedStatus(acc, xid);
                          if (status == OncRpc.SUCCESS) {
                            done.trySuccess(
                                String.format("ok %.1f", (System.nanoTime() - t0) / 1e6));
                          } else {
                            done.tryFailure(
                                new java.io.IOException(
                                    "NFS NULL answered " + OncRpc.acceptStatusName(status)));
                          }
                        } catch (OncRpc.RpcException e) {
                          done.tryFailure(e);
                        } finally {
                          acc.release();
                          acc = null;
                        }
                      } else {
                        ctx.read();
                      }
                    }

                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                      if (acc != null) {
                        acc.release();
                        acc = null;
                      }
                      done.tryFailure(new java.io.IOException("upstream closed during ping"));
                    }
                  });
          ch.writeAndFlush(
              OncRpc.call(ch.alloc(), xid, OncRpc.NFS_PROGRAM, 4, 0, ch.alloc().buffer(0)));
          ch.read();
        });
    return done;
  }
}

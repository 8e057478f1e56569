package io.efscsi.proxy.training;

import io.efscsi.proxy.rpc.OncRpc;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;

/**
 * The mount target during training: TLS (or not), a READY answer to BindClientToPartition, an empty
 * success to NFS NULL, and a reply of {@code replyBytes} to any other call.
 */
final class TrainingUpstream implements AutoCloseable {

  private final EventLoopGroup group;
  private final Channel listener;

  private TrainingUpstream(EventLoopGroup group, Channel listener) {
    this.group = group;
    this.listener = listener;
  }

  /** {@code keyStore} is a PKCS#12 file with password "training", or null for plain TCP. */
  static TrainingUpstream start(Path keyStore, int replyBytes) throws Exception {
    SslContext tls = null;
    if (keyStore != null) {
      char[] password = "training".toCharArray();
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(keyStore)) {
        ks.load(in, password);
      }
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, password);
      tls = SslContextBuilder.forServer(kmf).sslProvider(SslProvider.OPENSSL).build();
    }
    SslContext context = tls;
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    Channel listener =
        new ServerBootstrap()
            .group(group)
            .channel(EpollServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    if (context != null) {
                      ch.pipeline().addLast(context.newHandler(ch.alloc()));
                    }
                    ch.pipeline().addLast(new Answers(replyBytes));
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
    return new TrainingUpstream(group, listener);
  }

  int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  @Override
  public void close() {
    listener.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private static final class Answers extends ByteToMessageDecoder {
    private final int replyBytes;

    Answers(int replyBytes) {
      this.replyBytes = replyBytes;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      while (in.readableBytes() >= 4) {
        int length = in.getInt(in.readerIndex()) & 0x7fff_ffff;
        if (in.readableBytes() < 4 + length) {
          return;
        }
        int xid = in.getInt(in.readerIndex() + 4);
        int program = in.getInt(in.readerIndex() + 16);
        int procedure = in.getInt(in.readerIndex() + 24);
        in.skipBytes(4 + length);
        int results =
            program == OncRpc.NFS_PROGRAM && procedure != 0
                ? replyBytes
                : program == OncRpc.NFS_PROGRAM ? 0 : 4 + 64 + 16;
        ByteBuf r = ctx.alloc().buffer(4 + 24 + results);
        r.writeInt(0x8000_0000 | (24 + results));
        r.writeInt(xid).writeInt(OncRpc.REPLY).writeInt(OncRpc.MSG_ACCEPTED);
        r.writeInt(0).writeInt(0).writeInt(OncRpc.SUCCESS);
        if (program != OncRpc.NFS_PROGRAM) {
          r.writeInt(3).writeZero(64); // READY, partition id
          r.writeInt(1).writeInt(300 << 20).writeInt(1).writeInt(1); // scale-up config
        } else {
          r.writeZero(results);
        }
        ctx.write(r);
      }
      ctx.flush();
    }
  }
}

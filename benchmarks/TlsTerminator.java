import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.File;
import java.net.InetSocketAddress;

/**
 * The EFS side for benchmarks/nfslab.py when stunnel's server would be part of the bound: a TLS
 * terminator on Netty and BoringSSL (the distribution's lib/proxy jars) that relays each connection
 * to nfs-ganesha with reads of up to 1 MiB, one event loop, like Netty's proxy example. Usage (the
 * source launcher): java -cp 'lib/proxy/*' TlsTerminator.java PORT UPSTREAM_PORT CERT KEY
 */
public final class TlsTerminator {

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    int upstream = Integer.parseInt(args[1]);
    SslContext tls =
        SslContextBuilder.forServer(new File(args[2]), new File(args[3]))
            .sslProvider(SslProvider.OPENSSL)
            .build();
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    new ServerBootstrap()
        .group(group)
        .channel(EpollServerSocketChannel.class)
        .childOption(ChannelOption.AUTO_READ, false)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.RECVBUF_ALLOCATOR, reads())
        .childHandler(
            new ChannelInitializer<Channel>() {
              @Override
              protected void initChannel(Channel ch) {
                ch.pipeline().addLast(tls.newHandler(ch.alloc()), new Front(upstream));
              }
            })
        .bind(new InetSocketAddress("127.0.0.1", port))
        .sync()
        .channel()
        .closeFuture()
        .sync();
  }

  static AdaptiveRecvByteBufAllocator reads() {
    AdaptiveRecvByteBufAllocator a = new AdaptiveRecvByteBufAllocator(1024, 64 * 1024, 1 << 20);
    a.maxMessagesPerRead(1);
    return a;
  }

  /** Relays what its side reads to the peer, and reads on once that was written. */
  static class Pipe extends ChannelInboundHandlerAdapter {
    Channel peer;

    Pipe(Channel peer) {
      this.peer = peer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      peer.write(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener((ChannelFutureListener) f -> {
        if (f.isSuccess()) {
          ctx.channel().read();
        } else {
          ctx.channel().close();
        }
      });
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (peer != null) {
        peer.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  /** The client's side: opens the upstream, then both sides relay. */
  static final class Front extends Pipe {
    private final int upstreamPort;

    Front(int upstreamPort) {
      super(null);
      this.upstreamPort = upstreamPort;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      Channel front = ctx.channel();
      new Bootstrap()
          .group(front.eventLoop())
          .channel(EpollSocketChannel.class)
          .option(ChannelOption.AUTO_READ, false)
          .option(ChannelOption.TCP_NODELAY, true)
          .option(ChannelOption.RECVBUF_ALLOCATOR, reads())
          .handler(new Pipe(front))
          .connect(new InetSocketAddress("127.0.0.1", upstreamPort))
          .addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
              front.close();
              return;
            }
            peer = f.channel();
            peer.read();
            front.read();
          });
    }
  }
}

package io.efscsi.it;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * The EFS side for tests: terminates TLS (or not), answers BindClientToPartition (awsfile-v3:
 * program 400123 v1 proc 2; efs-v2: 100200 v1 proc 1) as told for the n-th connection of each
 * kernel connection (the proxy's incarnation), and forwards every other RPC record to nfs-ganesha
 * over a connection of its own. It keeps what the proxy did: the first record's program on every
 * connection, the identifier and incarnation it bound with, the partition it was given, and how
 * many records each connection carried.
 */
final class EfsTestServer implements AutoCloseable {

  static final int AWSFILE = 400123;
  static final int EFS_V2 = 100200;

  /** How the server answers a bind call. */
  enum Kind {
    RETRY(0),
    RETRY_LATER(1),
    PREFERRED(2),
    READY(3),
    ERROR(4),
    /** The server does not know the program: an accepted reply with PROG_UNAVAIL. */
    PROG_UNAVAIL(-1);

    final int wire;

    Kind(int wire) {
      this.wire = wire;
    }
  }

  /** The answer to one connection's bind call, with the scale-up config the server advertises. */
  record Answer(
      Kind kind, String partition, int maxConnections, int bytesPerSecond, int breachedSeconds) {
    static Answer ready(String partition, int maxConnections, int bytesPerSecond) {
      return new Answer(Kind.READY, partition, maxConnections, bytesPerSecond, 1);
    }

    static Answer of(Kind kind) {
      return new Answer(kind, "p0", 5, 300 << 20, 1);
    }

    byte[] partitionId() {
      byte[] id = new byte[64];
      byte[] name = partition.getBytes(StandardCharsets.US_ASCII);
      System.arraycopy(name, 0, id, 0, name.length);
      return id;
    }
  }

  /** What one connection did. */
  static final class Conn {
    final int index;
    volatile int firstProgram = -1;
    volatile int firstVersion = -1;
    volatile int firstProcedure = -1;
    volatile String identifier;
    volatile long incarnation = -1;
    volatile String partition;
    final AtomicLong records = new AtomicLong();

    Conn(int index) {
      this.index = index;
    }

    boolean boundFirst() {
      return firstProgram == AWSFILE || firstProgram == EFS_V2;
    }

    /** NFS records forwarded, the bind call not counted. */
    long nfsRecords() {
      return records.get() - (boundFirst() ? 1 : 0);
    }

    @Override
    public String toString() {
      return "conn "
          + index
          + " first program "
          + firstProgram
          + " partition "
          + partition
          + " incarnation "
          + incarnation
          + " records "
          + records;
    }
  }

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
  private final SslContext tls;
  private final int nfsPort;
  private final IntFunction<Answer> answers;
  private final long bytesPerSecondPerConnection;
  private final Channel listener;
  final List<Conn> conns = new CopyOnWriteArrayList<>();
  private final java.util.concurrent.atomic.AtomicInteger accepted =
      new java.util.concurrent.atomic.AtomicInteger();

  /**
   * @param cert server certificate, or null for plain TCP
   * @param answers the answer for the n-th connection (0-based) of a kernel connection (the proxy's
   *     incarnation)
   * @param bytesPerSecondPerConnection cap on reply bytes per connection and second (0 = none), so
   *     a transfer lasts long enough for the proxy's scale-up to be seen
   */
  EfsTestServer(
      Path cert,
      Path key,
      int nfsPort,
      IntFunction<Answer> answers,
      long bytesPerSecondPerConnection)
      throws Exception {
    this.tls =
        cert == null
            ? null
            : SslContextBuilder.forServer(cert.toFile(), key.toFile())
                .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                .build();
    this.nfsPort = nfsPort;
    this.answers = answers;
    this.bytesPerSecondPerConnection = bytesPerSecondPerConnection;
    this.listener =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    Conn conn = new Conn(accepted.getAndIncrement());
                    conns.add(conn);
                    if (tls != null) {
                      ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                    }
                    ch.pipeline().addLast(new Records()).addLast(new Relay(conn));
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
  }

  int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  /** Connections whose bind call carried {@code incarnation}. */
  List<Conn> ofIncarnation(long incarnation) {
    List<Conn> out = new ArrayList<>();
    for (Conn c : conns) {
      if (c.incarnation == incarnation) {
        out.add(c);
      }
    }
    return out;
  }

  long connectionsOnPartition(String partition) {
    return conns.stream().filter(c -> partition.equals(c.partition)).count();
  }

  @Override
  public void close() {
    listener.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** One RPC fragment per message, record mark included; {@code last} on the record's end. */
  record Fragment(ByteBuf bytes, boolean last) {}

  private static final class Records extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      while (in.readableBytes() >= 4) {
        int mark = in.getInt(in.readerIndex());
        int length = mark & 0x7fff_ffff;
        if (in.readableBytes() < 4 + length) {
          return;
        }
        out.add(new Fragment(in.readRetainedSlice(4 + length), mark < 0));
      }
    }
  }

  /** Answers the bind call if it comes first, then relays records to ganesha and bytes back. */
  private final class Relay extends ChannelInboundHandlerAdapter {
    private final Conn conn;
    private Channel nfs;
    private final List<ByteBuf> early = new ArrayList<>();
    private boolean first = true;
    private long windowStart = System.nanoTime();
    private long windowBytes;
    private long throttledUntil = System.nanoTime();
    private Channel clientChannel;

    Relay(Conn conn) {
      this.conn = conn;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      Channel client = ctx.channel();
      clientChannel = client;
      new Bootstrap()
          .group(client.eventLoop())
          .channel(NioSocketChannel.class)
          .option(ChannelOption.TCP_NODELAY, true)
          .handler(
              new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext n, Object msg) {
                  ByteBuf b = (ByteBuf) msg;
                  throttle(n.channel(), b.readableBytes());
                  client.writeAndFlush(b);
                  if (!client.isWritable()) {
                    n.channel().config().setAutoRead(false);
                  }
                }

                @Override
                public void channelWritabilityChanged(ChannelHandlerContext n) {
                  if (n.channel().isWritable()) {
                    client.config().setAutoRead(true);
                  }
                }

                @Override
                public void channelInactive(ChannelHandlerContext n) {
                  client.close();
                }
              })
          .connect(new InetSocketAddress("127.0.0.1", nfsPort))
          .addListener(
              (ChannelFutureListener)
                  f -> {
                    if (!f.isSuccess()) {
                      client.close();
                      return;
                    }
                    nfs = f.channel();
                    for (ByteBuf b : early) {
                      nfs.write(b);
                    }
                    early.clear();
                    nfs.flush();
                  });
      ctx.fireChannelActive();
    }

    /** Pauses reading from ganesha while over the per-connection rate. */
    private void throttle(Channel from, int bytes) {
      if (bytesPerSecondPerConnection <= 0) {
        return;
      }
      windowBytes += bytes;
      long elapsed = System.nanoTime() - windowStart;
      long allowedNanos = windowBytes * 1_000_000_000L / bytesPerSecondPerConnection;
      if (allowedNanos > elapsed) {
        throttledUntil = windowStart + allowedNanos;
        from.config().setAutoRead(false);
        from.eventLoop()
            .schedule(() -> resumeNfs(from), allowedNanos - elapsed, TimeUnit.NANOSECONDS);
      }
      if (elapsed > TimeUnit.SECONDS.toNanos(1)) {
        windowStart = System.nanoTime();
        windowBytes = 0;
      }
    }

    private void resumeNfs(Channel nfsChannel) {
      if (nfsChannel.isActive()
          && clientChannel.isWritable()
          && System.nanoTime() - throttledUntil >= 0) {
        nfsChannel.config().setAutoRead(true);
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Fragment f = (Fragment) msg;
      if (f.last()) {
        conn.records.incrementAndGet();
      }
      if (first) {
        first = false;
        if (answerBind(ctx, f.bytes())) {
          f.bytes().release();
          return;
        }
      }
      if (nfs == null) {
        early.add(f.bytes());
        return;
      }
      nfs.writeAndFlush(f.bytes());
      if (!nfs.isWritable()) {
        ctx.channel().config().setAutoRead(false);
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (nfs != null) {
        resumeNfs(nfs);
      }
      ctx.fireChannelWritabilityChanged();
    }

    /** True when the record was a bind call and has been answered. */
    private boolean answerBind(ChannelHandlerContext ctx, ByteBuf record) {
      ByteBuf r = record.duplicate();
      r.skipBytes(4);
      int xid = r.readInt();
      r.readInt(); // CALL
      r.readInt(); // rpc version
      conn.firstProgram = r.readInt();
      conn.firstVersion = r.readInt();
      conn.firstProcedure = r.readInt();
      if (!conn.boundFirst()) {
        return false;
      }
      skipAuth(r);
      skipAuth(r);
      byte[] id = new byte[r.readInt()];
      r.readBytes(id);
      conn.identifier = HexFormat.of().formatHex(id);
      int incLength = r.readInt();
      conn.incarnation = incLength == 8 ? r.readLong() : -1;
      Answer a = answers.apply(ofIncarnation(conn.incarnation).indexOf(conn));
      ByteBuf out = Unpooled.buffer(128);
      out.writeInt(0); // mark, set below
      out.writeInt(xid).writeInt(1).writeInt(0).writeInt(0).writeInt(0); // REPLY ACCEPTED verf
      if (a.kind() == Kind.PROG_UNAVAIL) {
        out.writeInt(1);
      } else {
        out.writeInt(0).writeInt(a.kind().wire);
        switch (a.kind()) {
          case READY, PREFERRED -> {
            out.writeBytes(a.partitionId());
            conn.partition = a.partition();
          }
          default -> {
            byte[] m = ("test server says " + a.kind()).getBytes(StandardCharsets.UTF_8);
            out.writeInt(m.length).writeBytes(m).writeZero((4 - m.length % 4) % 4);
          }
        }
        out.writeInt(a.maxConnections()).writeInt(a.bytesPerSecond()).writeInt(a.breachedSeconds());
        if (conn.firstProgram == AWSFILE) {
          out.writeInt(1); // lookback window
        }
      }
      out.setInt(0, 0x8000_0000 | (out.readableBytes() - 4));
      ctx.writeAndFlush(out);
      return true;
    }

    private static void skipAuth(ByteBuf r) {
      r.readInt();
      int len = r.readInt();
      r.skipBytes(len + (4 - len % 4) % 4);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      early.forEach(ByteBuf::release);
      early.clear();
      if (nfs != null) {
        nfs.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}

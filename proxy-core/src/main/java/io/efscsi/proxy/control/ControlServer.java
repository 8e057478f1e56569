package io.efscsi.proxy.control;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.handler.codec.string.StringEncoder;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.function.Function;

/**
 * The proxy's control socket: a unix socket, one command per line, one answer line each. {@code
 * status} answers a JSON object; {@code ping} answers {@code ok <ms>} after an NFS NULL call
 * through a fresh upstream connection (TLS and bind included), or {@code error <why>}; {@code
 * serve} answers {@code ok serving} and {@code drain} {@code ok draining <n>} (a rolling upgrade
 * moving the port to another proxy), {@code release} {@code ok released <n>} (a handback to the Go
 * driver: the port is let go, the kernel connections still served), or {@code error <why>}.
 */
public final class ControlServer {

  /** The commands, answered asynchronously. */
  public interface Commands {
    String status();

    Future<String> ping();

    /** Accept the port's connections from now on (a proxy on an inherited listener waits). */
    Future<String> serve();

    /** Stop accepting, relay the replies still due, close the kernel connections and exit. */
    Future<String> drain();

    /** Let the port go (another program will bind it); keep serving the kernel connections. */
    Future<String> release();
  }

  /** The commands, as the answer to an unknown one lists them. */
  static final String COMMANDS = "status, ping, serve, drain, release";

  private final Channel channel;
  private final Path path;

  private ControlServer(Channel channel, Path path) {
    this.channel = channel;
    this.path = path;
  }

  public static ControlServer start(EventLoopGroup group, Path path, Commands commands)
      throws IOException {
    Files.createDirectories(path.getParent());
    Files.deleteIfExists(path);
    Function<String, Future<String>> dispatch =
        line ->
            switch (line.strip()) {
              case "status" -> group.next().newSucceededFuture(commands.status());
              case "ping" -> commands.ping();
              case "serve" -> commands.serve();
              case "drain" -> commands.drain();
              case "release" -> commands.release();
              default ->
                  group
                      .next()
                      .newSucceededFuture(
                          "error unknown command '" + line.strip() + "'; commands: " + COMMANDS);
            };
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(EpollServerDomainSocketChannel.class)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline()
                        .addLast(new LineBasedFrameDecoder(256))
                        .addLast(new StringDecoder(StandardCharsets.UTF_8))
                        .addLast(new StringEncoder(StandardCharsets.UTF_8))
                        .addLast(
                            new SimpleChannelInboundHandler<String>() {
                              @Override
                              protected void channelRead0(ChannelHandlerContext ctx, String line) {
                                dispatch
                                    .apply(line)
                                    .addListener(f -> {
                                      String answer =
                                          f.isSuccess()
                                              ? (String) f.getNow()
                                              : "error " + f.cause().getMessage();
                                      ctx.writeAndFlush(answer + "\n");
                                    });
                              }

                              @Override
                              public void exceptionCaught(ChannelHandlerContext ctx, Throwable t) {
                                ctx.writeAndFlush("error " + t.getMessage() + "\n")
                                    .addListener(ChannelFutureListener.CLOSE);
                              }
                            });
                  }
                });
    Channel ch;
    try {
      ch = b.bind(new DomainSocketAddress(path.toString())).sync().channel();
    } catch (Exception e) {
      throw new IOException("cannot listen on control socket " + path + ": " + e.getMessage(), e);
    }
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
    return new ControlServer(ch, path);
  }

  public void close() {
    channel.close().syncUninterruptibly();
    try {
      Files.deleteIfExists(path);
    } catch (IOException ignored) {
      // the supervisor removes leftovers
    }
  }
}

package io.efscsi.common.grpc;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** Client channels to a CSI endpoint, as kubelet and the sidecars open them (demo and tests). */
public final class CsiChannels {

  private CsiChannels() {}

  /** A channel and the event loop it owns; closing shuts both down. */
  public record Client(ManagedChannel channel, EventLoopGroup group) implements AutoCloseable {
    @Override
    public void close() {
      channel.shutdownNow();
      try {
        channel.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  public static Client open(Endpoint endpoint) {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    NettyChannelBuilder b =
        switch (endpoint) {
          case Endpoint.Unix u ->
              NettyChannelBuilder.forAddress(new DomainSocketAddress(u.path().toString()))
                  .channelType(EpollDomainSocketChannel.class);
          case Endpoint.Tcp t ->
              NettyChannelBuilder.forAddress(
                      new InetSocketAddress(t.host().isEmpty() ? "127.0.0.1" : t.host(), t.port()))
                  .channelType(EpollSocketChannel.class);
        };
    ManagedChannel channel = b.eventLoopGroup(group).usePlaintext().build();
    return new Client(channel, group);
  }
}

package io.efscsi.proxy.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.util.concurrent.Future;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control socket's commands over a real unix socket, answered by an in-memory proxy. */
class ControlServerTest {

  @TempDir Path dir;
  final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
  final List<String> called = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  ControlServer start(Path path) throws Exception {
    return ControlServer.start(
        group,
        path,
        new ControlServer.Commands() {
          @Override
          public String status() {
            called.add("status");
            return "{}";
          }

          @Override
          public Future<String> ping() {
            called.add("ping");
            return group.next().newSucceededFuture("ok 1.0");
          }

          @Override
          public Future<String> serve() {
            called.add("serve");
            return group.next().newSucceededFuture("ok serving");
          }

          @Override
          public Future<String> drain() {
            called.add("drain");
            return group.next().newFailedFuture(new IllegalStateException("cannot drain now"));
          }

          @Override
          public Future<String> release() {
            called.add("release");
            return group.next().newSucceededFuture("ok released 0");
          }
        });
  }

  /** Sends each command on one connection and reads one answer line for each. */
  static List<String> ask(Path socket, String... commands) throws Exception {
    try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
      List<String> answers = new java.util.ArrayList<>();
      for (String c : commands) {
        ch.write(ByteBuffer.wrap((c + "\n").getBytes(StandardCharsets.UTF_8)));
        answers.add(in.readLine());
      }
      return answers;
    }
  }

  @Test
  void serveDrainAndReleaseReachTheProxyAndAnUnknownCommandListsThemAll() throws Exception {
    Path path = dir.resolve("p.sock");
    ControlServer server = start(path);
    try {
      assertEquals(
          List.of("ok serving", "error cannot drain now", "ok released 0"),
          ask(path, "serve", "drain", "release"));
      assertEquals(List.of("{}", "ok 1.0"), ask(path, " status ", "ping"));
      assertEquals(
          List.of("error unknown command 'restart'; commands: status, ping, serve, drain, release"),
          ask(path, "restart"));
      assertEquals(List.of("serve", "drain", "release", "status", "ping"), called);
    } finally {
      server.close();
    }
    assertFalse(Files.exists(path), "its socket file is removed");
  }
}

package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.supervisor.cgroup.NoCgroupPlacer;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A closed supervisor writes nothing more for the proxies it launched: they outlive it, the next
 * supervisor adopts them and may stop them and remove their files. Seen in TakeoverIT on CI: the
 * first supervisor's child waiter saw the exit the second one caused and wrote {@code
 * proxy-<port>.exit} after the second had cleaned up, leaving a file nobody removes.
 */
class ClosedSupervisorTest {

  @TempDir Path state;

  final Map<Long, RetiredProxyTest.SlowProcess> alive = new ConcurrentHashMap<>();

  /** Launches a process that lives until signalled and answers on its control socket. */
  final ProxyLauncher answering =
      (config, log, placement) -> {
        String name = config.getFileName().toString();
        Path socket = config.resolveSibling(name.replace(".properties", ".sock"));
        serve(socket);
        RetiredProxyTest.SlowProcess p = new RetiredProxyTest.SlowProcess(7001);
        alive.put(p.pid(), p);
        return new ProxyLauncher.Started(p.pid(), Optional.of(p));
      };

  final ProcessTable processes = RetiredProxyTest.signalling(alive);

  @Test
  void aProxyThatExitsAfterItsSupervisorClosedLeavesNoFileBehind() throws Exception {
    ProxySupervisor sup =
        new ProxySupervisor(
            SupervisorConfig.defaults(state).withPorts(20070, 20070),
            new NoCgroupPlacer("test"),
            answering,
            processes,
            List::of,
            mountPoint -> {},
            port -> true,
            Clock.systemUTC(),
            new ProxySupervisor.Listener() {});
    sup.start();
    ProxySpec config = StartFailureTest.plainConfig();
    assertEquals(20070, sup.ensure("fs-1", config, "stage").port());
    sup.close(); // the plugin stops; its proxy runs on

    // the next supervisor stops the proxy and removes its files (as TakeoverIT's NodeUnpublish)
    processes.signal(7001, false);
    Path dir = state.resolve("proxies");
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    Thread.sleep(500); // the closed supervisor's child waiter has seen the exit by now
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(), files.toList(), "the closed supervisor wrote nothing");
    }
  }

  /** Answers every line on {@code socket} with {@code ok}, as a proxy's control socket. */
  private static void serve(Path socket) {
    try {
      ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      server.bind(UnixDomainSocketAddress.of(socket));
      Thread.ofVirtual()
          .start(() -> {
            while (true) {
              try (SocketChannel ch = server.accept()) {
                ch.read(ByteBuffer.allocate(256));
                ch.write(ByteBuffer.wrap("ok\n".getBytes(StandardCharsets.US_ASCII)));
              } catch (IOException closed) {
                return;
              }
            }
          });
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}

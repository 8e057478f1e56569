package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountInfoParser;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import io.efscsi.supervisor.upgrade.ListenerHandover;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which proxies a roll moves, in what order, and when it stops, with real listening sockets and
 * control sockets standing in for the proxies (this test's process plays each proxy's pid; the
 * successor never starts, so each move fails at its launch and leaves the proxy as it was).
 */
class RollingUpgradeTest {

  @TempDir Path state;

  final long self = ProcessHandle.current().pid();
  final List<ServerSocketChannel> listeners = new ArrayList<>();
  final List<Thread> controls = new ArrayList<>();
  final List<String> launchedOn = new CopyOnWriteArrayList<>();
  final List<String> heard = new CopyOnWriteArrayList<>();
  final AtomicInteger signals = new AtomicInteger();

  /** This process is every proxy: alive with ticks 7; signals are counted, never sent. */
  final ProcessTable processes =
      FakeProcesses.table(pid -> pid == self, 7, (pid, force) -> signals.incrementAndGet());

  final ProxyLauncher launcher =
      new ProxyLauncher() {
        @Override
        public Started start(Path configFile, Path logFile, Placement placement)
            throws IOException {
          throw new IOException("no proxy is started in this test");
        }

        @Override
        public String build() {
          return "new";
        }

        @Override
        public Started startOnListener(Path config, Path log, Placement placement, int fd)
            throws IOException {
          launchedOn.add(ListenerHandover.localPort(fd) + " in " + placement.describe());
          throw new IOException("no java here");
        }
      };

  @AfterEach
  void close() throws IOException {
    for (ServerSocketChannel l : listeners) {
      l.close();
    }
    controls.forEach(Thread::interrupt);
  }

  /** A listening port and a control socket answering status as a proxy of build {@code old}. */
  private int proxy(String build, boolean wanted) throws IOException {
    ServerSocketChannel l = ServerSocketChannel.open();
    l.bind(new InetSocketAddress("127.0.0.1", 0), 8);
    listeners.add(l);
    int port = ((InetSocketAddress) l.getLocalAddress()).getPort();
    Path sock = new StateStore(state).dir().resolve("proxy-" + port + ".sock");
    ServerSocketChannel control = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    control.bind(UnixDomainSocketAddress.of(sock));
    listeners.add(control);
    controls.add(Thread.ofVirtual().start(() -> answer(control)));
    new StateStore(state)
        .write(
            new ProxyRecord(
                    "proxy-" + port,
                    "key-" + port,
                    port,
                    self,
                    7,
                    "test:proxy-" + port,
                    ProxySpec.plain("127.0.0.1", 2049).config(port, sock).toMap(),
                    wanted ? Set.of("/stage/" + port) : Set.of(),
                    0,
                    1)
                .withBuild(build));
    return port;
  }

  private static void answer(ServerSocketChannel control) {
    while (true) {
      try (SocketChannel c = control.accept()) {
        ByteBuffer in = ByteBuffer.allocate(256);
        c.read(in);
        String cmd = new String(in.array(), 0, in.position(), StandardCharsets.US_ASCII).strip();
        String answer =
            cmd.equals("status")
                ? "{\"accepting\": true, \"client_connections\": 1}"
                : "error unknown command";
        c.write(ByteBuffer.wrap((answer + "\n").getBytes(StandardCharsets.US_ASCII)));
      } catch (IOException e) {
        return;
      }
    }
  }

  private ProxySupervisor supervisor(List<Integer> mounted, boolean rolling) throws IOException {
    int lower =
        listeners.stream()
            .mapToInt(RollingUpgradeTest::port)
            .filter(p -> p > 0)
            .min()
            .orElse(20049);
    int upper = listeners.stream().mapToInt(RollingUpgradeTest::port).max().orElse(20049);
    List<MountInfo> table = new ArrayList<>();
    for (int p : mounted) {
      table.add(
          MountInfoParser.parseLine(
              "1"
                  + p
                  + " 22 0:5"
                  + p
                  + " / /stage/"
                  + p
                  + " rw - nfs4 127.0.0.1:/ rw,vers=4.1,port="
                  + p
                  + ",addr=127.0.0.1",
              1));
    }
    return new ProxySupervisor(
        SupervisorConfig.defaults(state)
            .withPorts(lower, upper)
            .withTimings(Duration.ofHours(1), Duration.ofHours(1), 3, Duration.ofHours(1))
            .with(b ->
                b.upgrades =
                    new SupervisorConfig.Upgrades(rolling, Duration.ZERO, Duration.ofMillis(20))),
        FakeGroups.placer(d -> FakeGroups.group(d, List::of, () -> {}), name -> {}),
        launcher,
        processes,
        () -> table,
        mountPoint -> {},
        port -> true,
        Clock.systemUTC(),
        new ProxySupervisor.Listener() {
          @Override
          public void upgradeFailed(String key, int port, String reason) {
            heard.add("failed " + port + " " + reason);
          }

          @Override
          public void upgradesStopped(String reason) {
            heard.add("stopped " + reason);
          }
        });
  }

  private static int port(ServerSocketChannel c) {
    try {
      return c.getLocalAddress() instanceof InetSocketAddress a ? a.getPort() : -1;
    } catch (IOException e) {
      return -1;
    }
  }

  @Test
  void staleProxiesAreTriedOneAtATimeByPortAndThreeFailuresStopTheRoll() throws Exception {
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      ports.add(proxy("old", true));
    }
    int current = proxy("new", true);
    List<Integer> sorted = ports.stream().sorted().toList();
    List<Integer> mounted = new ArrayList<>(ports);
    mounted.add(current);
    long socketsBefore = sockets();
    try (ProxySupervisor sup = supervisor(mounted, true)) {
      sup.start();
      Await.until("the roll to stop", () -> heard.stream().anyMatch(h -> h.startsWith("stopped")));
      Thread.sleep(200); // rounds go on: nothing more is tried
      assertEquals(4, sup.stats().staleProxies.get(), "the proxy of this build is not stale");
      assertEquals(3, sup.stats().proxyMoveFailures.get());
      assertEquals(
          sorted.subList(0, 3).stream().map(p -> p + " in test:proxy-" + p + "-b").toList(),
          launchedOn,
          "the copied socket is the proxy's port; the successor gets a group of its own");
      assertTrue(
          heard
              .get(0)
              .startsWith("failed " + sorted.get(0) + " launch: cannot start the successor"),
          heard::toString);
      assertTrue(heard.get(3).startsWith("stopped 3 moves failed in a row"), heard::toString);
      assertEquals(0, signals.get(), "the old proxies were never signalled");
      for (int p : ports) {
        ProxyRecord r =
            new StateStore(state)
                .list().stream().filter(x -> x.port() == p).findFirst().orElseThrow();
        assertEquals(self, r.pid(), "still the old process");
        assertEquals("old", r.proxyBuild());
        assertTrue(r.move().isEmpty(), r::toJson);
      }
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", sorted.get(0))) {
        assertTrue(s.isConnected(), "the old listener is untouched");
      }
      assertEquals(socketsBefore, sockets(), "no copied socket is left open in this process");
    }
  }

  @Test
  void neverCountsStaleProxiesAndMovesNone() throws Exception {
    int port = proxy("old", true);
    try (ProxySupervisor sup = supervisor(List.of(port), false)) {
      sup.start();
      Await.until("a round", () -> sup.stats().staleProxies.get() == 1);
      Thread.sleep(100);
      assertEquals(List.of(), launchedOn);
    }
  }

  @Test
  void aProxyWithoutItsMountIsLeftToTheReconciler() throws Exception {
    int port = proxy("", true);
    try (ProxySupervisor sup = supervisor(List.of(), true)) {
      sup.start();
      Await.until("a round", () -> sup.stats().staleProxies.get() == 1);
      Thread.sleep(100);
      assertEquals(List.of(), launchedOn, "an unknown build is stale, but no mount: not moved");
      assertTrue(sup.holds(port));
    }
  }

  /** Sockets this process holds open. */
  private static long sockets() throws IOException {
    long n = 0;
    try (var fds = java.nio.file.Files.list(Path.of("/proc/self/fd"))) {
      for (Path f : fds.toList()) {
        try {
          if (java.nio.file.Files.readSymbolicLink(f).toString().startsWith("socket:")) {
            n++;
          }
        } catch (IOException gone) {
          // closed while listed
        }
      }
    }
    return n;
  }
}

package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.host.MountInfoParser;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slow is not hung: a proxy whose control socket takes requests but answers late is left up while
 * its process keeps working (a node short of CPU; seen in the kernel VM under a loaded host, where
 * two restarts cut the mounts' connections), and restarted once that lasts the slow limit; a proxy
 * that does no work, or whose socket refuses, is restarted as before. This test's process plays the
 * proxy (its pid, a control socket that never answers); signals are counted, never sent.
 */
class SlowProxyTest {

  static final int PORT = 20050;

  @TempDir Path state;

  final long self = ProcessHandle.current().pid();
  final List<Long> killedAt = new CopyOnWriteArrayList<>();
  final List<ServerSocketChannel> sockets = new ArrayList<>();
  final List<SocketChannel> held = new CopyOnWriteArrayList<>();
  final AtomicLong cpu = new AtomicLong();
  long started;

  @AfterEach
  void close() throws IOException {
    for (ServerSocketChannel s : sockets) {
      s.close();
    }
    for (SocketChannel c : held) {
      c.close();
    }
  }

  /** The proxy's work: {@code ticksPerSample} more CPU ticks at each look. */
  private ProcessTable processes(long ticksPerSample) {
    ProcessTable table =
        FakeProcesses.table(pid -> pid == self, 7, (pid, force) -> killedAt.add(System.nanoTime()));
    return new ProcessTable() {
      @Override
      public OptionalLong startTicks(long pid) {
        return table.startTicks(pid);
      }

      @Override
      public void signal(long pid, boolean force) {
        table.signal(pid, force);
      }

      @Override
      public Optional<Activity> activity(long pid) {
        return Optional.of(new Activity(cpu.addAndGet(ticksPerSample), 0, System.nanoTime()));
      }
    };
  }

  /** The proxy's record, and a control socket that takes requests and never answers them. */
  private void proxy(boolean answersNever) throws IOException {
    Path sock = new StateStore(state).dir().resolve("proxy-" + PORT + ".sock");
    if (answersNever) {
      ServerSocketChannel control = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      control.bind(UnixDomainSocketAddress.of(sock));
      sockets.add(control);
      Thread.ofVirtual()
          .start(() -> {
            try {
              while (true) {
                held.add(control.accept());
              }
            } catch (IOException e) {
              // closed
            }
          });
    }
    new StateStore(state)
        .write(
            new ProxyRecord(
                    "proxy-" + PORT,
                    "key-" + PORT,
                    PORT,
                    self,
                    7,
                    "test:proxy-" + PORT,
                    ProxySpec.plain("127.0.0.1", 2049).config(PORT, sock).toMap(),
                    Set.of("/stage/" + PORT),
                    0,
                    1)
                .withBuild("b"));
  }

  private ProxySupervisor supervisor(ProcessTable processes, Duration slowLimit)
      throws IOException {
    var mount =
        MountInfoParser.parseLine(
            "1 22 0:5 / /stage/"
                + PORT
                + " rw - nfs4 127.0.0.1:/ rw,vers=4.1,port="
                + PORT
                + ",addr=127.0.0.1",
            1);
    ProxyLauncher none =
        (config, log, placement) -> {
          throw new IOException("no proxy is started in this test");
        };
    started = System.nanoTime();
    return new ProxySupervisor(
        SupervisorConfig.defaults(state)
            .withPorts(PORT, PORT)
            .withTimings(Duration.ofHours(1), Duration.ofHours(1), 3, Duration.ofMillis(50))
            .with(b -> {
              b.upgrades = new SupervisorConfig.Upgrades(false, Duration.ZERO, Duration.ZERO);
              b.patience = new SupervisorConfig.HealthPatience(Duration.ofMillis(100), slowLimit);
            }),
        FakeGroups.placer(d -> FakeGroups.group(d, List::of, () -> {}), name -> {}),
        none,
        processes,
        () -> List.of(mount),
        mountPoint -> {},
        port -> true,
        Clock.systemUTC(),
        new ProxySupervisor.Listener() {});
  }

  private long millisToFirstKill() {
    return (killedAt.get(0) - started) / 1_000_000;
  }

  @Test
  void aWorkingProxyThatAnswersLateStaysUpUntilTheSlowLimit() throws Exception {
    proxy(true);
    // 10 ticks (100 ms of CPU) a look, rounds 150 ms apart: well over 2 % of a CPU
    try (ProxySupervisor sup = supervisor(processes(10), Duration.ofMillis(1500))) {
      sup.start();
      Await.until("a slow round", () -> sup.stats().slowRounds.get() >= 3);
      assertEquals(List.of(), killedAt, "not killed while it works");
      assertEquals(0, sup.stats().healthRestarts.get());
      Await.until("the kill at the slow limit", () -> !killedAt.isEmpty());
      assertTrue(millisToFirstKill() >= 1500, "killed after " + millisToFirstKill() + " ms");
      assertEquals(1, sup.stats().healthRestarts.get());
    }
  }

  @Test
  void anIdleProxyThatAnswersNothingIsKilledAfterTwoRounds() throws Exception {
    proxy(true);
    try (ProxySupervisor sup = supervisor(processes(0), Duration.ofHours(1))) {
      sup.start();
      Await.until("the kill", () -> !killedAt.isEmpty());
      assertEquals(0, sup.stats().slowRounds.get(), "a stopped or deadlocked process is hung");
      assertTrue(millisToFirstKill() < 5_000, "killed after " + millisToFirstKill() + " ms");
    }
  }

  @Test
  void aWorkingProxyWhoseControlSocketIsGoneIsKilledAfterTwoRounds() throws Exception {
    proxy(false); // nothing listens: refused, not late
    try (ProxySupervisor sup = supervisor(processes(10), Duration.ofHours(1))) {
      sup.start();
      Await.until("the kill", () -> !killedAt.isEmpty());
      assertEquals(0, sup.stats().slowRounds.get(), "a refused request is not a slow answer");
    }
  }
}

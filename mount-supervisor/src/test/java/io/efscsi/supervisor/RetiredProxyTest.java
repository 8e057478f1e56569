package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.cgroup.Limits;
import io.efscsi.supervisor.cgroup.NoCgroupPlacer;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A proxy the reconciler stops while a restart of it is still waiting for the process to answer (a
 * JVM that starts slowly) is never launched again by the object it forgot. Seen in
 * KernelReliabilityIT scenario 10 in a slow VM: the in-flight restart's failure scheduled another,
 * the forgotten object went on launching processes on the port a new NodeStage had been given
 * again, overwrote the live proxy's record, and the next adoption killed the live proxy.
 */
class RetiredProxyTest {

  @TempDir Path state;

  /** Launched processes that never answer on their control socket and live until signalled. */
  final Map<Long, SlowProcess> alive = new ConcurrentHashMap<>();

  final AtomicLong nextPid = new AtomicLong(5000);

  final ProxyLauncher slow =
      (config, log, placement) -> {
        SlowProcess p = new SlowProcess(nextPid.incrementAndGet());
        alive.put(p.pid(), p);
        return new ProxyLauncher.Started(p.pid(), Optional.of(p));
      };

  final ProcessTable processes = signalling(alive);

  /** A process table of {@code alive}, in which a signal ends the process (and its waiter). */
  static ProcessTable signalling(Map<Long, SlowProcess> alive) {
    return FakeProcesses.table(
        alive::containsKey,
        1,
        (pid, force) -> {
          SlowProcess p = alive.remove(pid);
          if (p != null) {
            p.exit.complete(p);
          }
        });
  }

  @Test
  void aRestartInFlightWhenTheReconcilerStopsTheProxyLaunchesNothingMore() throws Exception {
    // the plugin died before the pid was recorded: adoption restarts it; wanted by a NodeStage
    // that was killed before it mounted
    new StateStore(state).write(StrayProxyTest.recordWithoutPid(""));
    SupervisorConfig config =
        SupervisorConfig.defaults(state)
            .withPorts(20050, 20050)
            .with(c -> {
              c.limits = new Limits(0, 0);
              c.reconcileInterval = Duration.ofMillis(50);
              c.mountGrace = Duration.ofMillis(200); // the mount never comes
              c.absentReads = 1;
              c.startTimeout = Duration.ofSeconds(30); // still waiting when the reconciler acts
              c.stopTimeout = Duration.ofMillis(200);
              c.backoffInitial = Duration.ofMillis(50); // a scheduled restart would come quickly
            });
    try (ProxySupervisor sup =
        new ProxySupervisor(
            config,
            new NoCgroupPlacer("test"),
            slow,
            processes,
            List::of, // no mount ever
            mountPoint -> {},
            port -> true,
            Clock.systemUTC(),
            new ProxySupervisor.Listener() {})) {
      sup.start();
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!sup.status().isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertEquals(List.of(), sup.status(), "the reconciler stopped and forgot the proxy");
      Thread.sleep(1_000); // twenty times the first restart delay
      assertEquals(5001, nextPid.get(), "one launch (the adoption's restart), none after the stop");
      assertEquals(Map.of(), alive, "the launched process was stopped");
      assertTrue(!sup.holds(20050), "the port is released");
      try (Stream<Path> files = Files.walk(state)) {
        assertEquals(
            List.of(),
            files
                .filter(Files::isRegularFile)
                .map(f -> state.relativize(f).toString())
                .filter(f -> !f.endsWith(".log") && !f.endsWith(".lock"))
                .toList(),
            "no record or config written again");
      }
    }
  }

  /** A process that is alive until signalled (a JVM still starting). */
  static final class SlowProcess extends StartFailureTest.ExitedProcess {
    SlowProcess(long pid) {
      super(143, pid);
    }

    @Override
    public int exitValue() {
      if (!exit.isDone()) {
        throw new IllegalThreadStateException("running");
      }
      return code;
    }

    @Override
    public boolean isAlive() {
      return !exit.isDone();
    }
  }
}

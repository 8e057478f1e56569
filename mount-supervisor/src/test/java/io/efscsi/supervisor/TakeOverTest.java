package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.cgroup.NoCgroupPlacer;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.SupervisorLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** No double ownership: a port something listens on is never taken over. */
class TakeOverTest {

  @TempDir Path state;

  final AtomicInteger launches = new AtomicInteger();
  final ProxyLauncher launcher =
      (config, log, placement) -> {
        launches.incrementAndGet();
        StartFailureTest.ExitedProcess p = new StartFailureTest.ExitedProcess(10);
        p.exit.complete(p);
        return new ProxyLauncher.Started(p.pid(), Optional.of(p));
      };
  final ProcessTable processes = StartFailureTest.NO_PROCESSES;

  static final ProxySpec CONFIG = ProxySpec.plain("127.0.0.1", 2049);

  ProxySupervisor supervisor(PortAllocator.BindProbe probe) throws Exception {
    return new ProxySupervisor(
        SupervisorConfig.defaults(state).withPorts(20049, 21049),
        new NoCgroupPlacer("test"),
        launcher,
        processes,
        List::of,
        mountPoint -> {},
        probe,
        Clock.systemUTC(),
        new ProxySupervisor.Listener() {});
  }

  @Test
  void aListenedPortIsNotTakenAndNothingIsLeft() throws Exception {
    try (ProxySupervisor sup = supervisor(port -> port != 20417)) {
      sup.start();
      ProxyStartException e = refused(sup);
      assertTrue(e.getMessage().contains("still listens on 127.0.0.1:20417"), e.getMessage());
      assertEquals(0, launches.get(), "never launched");
      assertFalse(sup.holds(20417));
      assertEquals(List.of(), sup.status());
      assertNoFiles();
    }
  }

  @Test
  void aProxyThatCannotStartLeavesNeitherRecordNorHold() throws Exception {
    try (ProxySupervisor sup = supervisor(port -> true)) {
      sup.start();
      refused(sup);
      assertEquals(1, launches.get());
      assertFalse(sup.holds(20417));
      assertEquals(0, sup.stats().takeovers.get());
      assertNoFiles();
    }
  }

  private static ProxyStartException refused(ProxySupervisor sup) {
    ProxyStartException e =
        assertThrows(
            ProxyStartException.class,
            () -> sup.takeOver("efs-utils:x", 20417, CONFIG, Set.of("/mnt/a")));
    assertEquals(ProxyStartException.Reason.BIND_FAILED, e.reason());
    return e;
  }

  private void assertNoFiles() throws Exception {
    try (Stream<Path> files = Files.walk(state)) {
      assertEquals(
          List.of(),
          files
              .filter(Files::isRegularFile)
              // the running supervisor's own lock is not a proxy's leftover
              .filter(f -> !f.equals(state.resolve(SupervisorLock.FILE)))
              .toList());
    }
  }
}

package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.supervisor.cgroup.NoCgroupPlacer;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.SupervisorLock;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A proxy that fails to start is the caller's failure to handle: its own exit notification, when it
 * arrives after the start was judged failed, must not restart it. Seen in KernelReliabilityIT
 * (scenario 5) under the emulated CPU: the bind failure was reported, then the forgotten proxy was
 * relaunched and its record written again.
 */
class StartFailureTest {

  @TempDir Path state;

  /** A launcher whose every proxy exits at once with code 1. */
  static final ProxyLauncher EXITING =
      (config, log, placement) -> {
        ExitedProcess p = new ExitedProcess(1);
        return new ProxyLauncher.Started(p.pid(), Optional.of(p));
      };

  /**
   * A supervisor of {@code state} on ports 20049-20060 whose proxies all exit at once ({@link
   * #EXITING}), with nothing unmounted and every port bindable.
   */
  static ProxySupervisor exiting(
      Path state,
      io.efscsi.supervisor.cgroup.CgroupPlacer placer,
      ProcessTable processes,
      io.efscsi.supervisor.host.MountTable mounts)
      throws java.io.IOException {
    return new ProxySupervisor(
        SupervisorConfig.defaults(state).withPorts(20049, 20060),
        placer,
        EXITING,
        processes,
        mounts,
        mountPoint -> {},
        port -> true,
        Clock.systemUTC(),
        new ProxySupervisor.Listener() {});
  }

  /** A proxy without TLS or BindClientToPartition (what it forwards to does not matter here). */
  static ProxySpec plainConfig() {
    return ProxySpec.plain("127.0.0.1", 2049);
  }

  /** A process table in which no process is alive (the launched ones have exited). */
  static final ProcessTable NO_PROCESSES =
      new ProcessTable() {
        @Override
        public OptionalLong startTicks(long pid) {
          return OptionalLong.empty();
        }

        @Override
        public void signal(long pid, boolean force) {}
      };

  /** A process that has already exited with {@code code}; its onExit completes when told to. */
  static class ExitedProcess extends Process {
    final int code;
    private final long pid;
    final CompletableFuture<Process> exit = new CompletableFuture<>();

    ExitedProcess(int code) {
      this(code, 4242);
    }

    ExitedProcess(int code, long pid) {
      this.code = code;
      this.pid = pid;
    }

    @Override
    public OutputStream getOutputStream() {
      return OutputStream.nullOutputStream();
    }

    @Override
    public InputStream getInputStream() {
      return InputStream.nullInputStream();
    }

    @Override
    public InputStream getErrorStream() {
      return InputStream.nullInputStream();
    }

    @Override
    public int waitFor() {
      exit.join(); // exits when the test says so, as onExit
      return code;
    }

    @Override
    public int exitValue() {
      return code;
    }

    @Override
    public boolean isAlive() {
      return false;
    }

    @Override
    public void destroy() {}

    @Override
    public long pid() {
      return pid;
    }

    @Override
    public CompletableFuture<Process> onExit() {
      return exit;
    }
  }

  @Test
  void aBindFailureSeenBeforeTheExitNotificationIsNotRestarted() throws Exception {
    AtomicInteger launches = new AtomicInteger();
    List<ExitedProcess> started = new java.util.concurrent.CopyOnWriteArrayList<>();
    ProxyLauncher launcher =
        (config, log, placement) -> {
          launches.incrementAndGet();
          ExitedProcess p = new ExitedProcess(10); // cannot listen
          started.add(p);
          return new ProxyLauncher.Started(p.pid(), Optional.of(p));
        };
    ProcessTable processes = NO_PROCESSES;
    try (ProxySupervisor sup =
        new ProxySupervisor(
            SupervisorConfig.defaults(state).withPorts(20049, 20049),
            new NoCgroupPlacer("test"),
            launcher,
            processes,
            List::of,
            mountPoint -> {},
            port -> true,
            Clock.systemUTC(),
            new ProxySupervisor.Listener() {})) {
      sup.start();
      ProxySpec config = plainConfig();
      ProxyStartException e =
          assertThrows(ProxyStartException.class, () -> sup.ensure("fs-1", config, "stage"));
      assertEquals(ProxyStartException.Reason.BIND_FAILED, e.reason());
      started.getFirst().exit.complete(started.getFirst()); // the exit notification comes late
      Thread.sleep(600); // several times the first restart delay (100 ms)
      assertEquals(1, launches.get(), "launched once, never restarted");
      assertEquals(0, sup.stats().restarts.get());
      assertEquals(List.of(), sup.status());
      try (Stream<Path> files = Files.walk(state)) {
        assertEquals(
            List.of(),
            files
                .filter(Files::isRegularFile)
                .map(f -> state.relativize(f).toString())
                .filter(f -> !f.equals(SupervisorLock.FILE)) // the running supervisor's own
                .toList(),
            "no record, config or log left");
      }
    }
  }
}

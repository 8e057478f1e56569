package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.ProxyStartException.Reason;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A proxy's current process and its group: spawned, adopted or moved in, and how it ended (an OOM
 * kill of its group counted once per exit, a signal, a code). It decides nothing about the proxy's
 * state (its {@link Supervised}'s {@link Lifecycle} does) and is not thread-safe: its Supervised's
 * lock guards it, except {@link #terminate}, which waits outside it.
 */
final class ProxyProcess {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyProcess.class);

  private final ProxyContext ctx;
  private final ProxyFiles files;
  private Placement placement;
  private Optional<Process> child = Optional.empty();
  private Instant startedAt;
  private long oomBaseline = -1;
  private long oomKills;
  private Optional<String> lastExit = Optional.empty();

  ProxyProcess(ProxyContext ctx, ProxyFiles files, Placement placement) {
    this.ctx = ctx;
    this.files = files;
    this.placement = placement;
  }

  Placement placement() {
    return placement;
  }

  /** Our own child's process, when we spawned it (an adopted one is not our child). */
  Optional<Process> child() {
    return child;
  }

  /** When the current process started (spawned, adopted or moved in); null before any. */
  Instant startedAt() {
    return startedAt;
  }

  long oomKills() {
    return oomKills;
  }

  Optional<String> lastExit() {
    return lastExit;
  }

  /** What {@link #spawn} made: the record as written and the process. */
  record Spawned(ProxyRecord record, ProxyLauncher.Started started) {}

  /**
   * Places the proxy in its group, writes its config and its record (the group first: a plugin that
   * dies between the launch and the record of its pid leaves a process the next one finds there,
   * {@link Adoption}; {@code placed} is told of it) and spawns the process; the record then names
   * its pid.
   */
  Spawned spawn(ProxyRecord record, java.util.function.Consumer<ProxyRecord> placed)
      throws ProxyStartException {
    Placement previous = placement;
    try {
      placement = ctx.placer().place(record.id(), ctx.config().limits());
      if (!previous.describe().isEmpty()
          && !previous.describe().equals(placement.describe())
          && previous.pids().isEmpty()) {
        previous.remove(); // the group of a moved proxy (ProxyMove) has another name
      }
    } catch (IOException | RuntimeException e) {
      throw new ProxyStartException(
          Reason.CGROUP,
          "cannot create the cgroup of proxy " + record.id() + ": " + e.getMessage());
    }
    ProxyLauncher.Started started;
    ProxyRecord written;
    try {
      Files.deleteIfExists(files.controlSocket());
      ProxyConfig.fromMap(record.config()).write(files.config());
      files.rotateLog();
      written = record.withProcess(0, 0, placement.describe()).withBuild(ctx.launcher().build());
      placed.accept(written);
      ctx.owner().writeRecord(written);
      started = ctx.launcher().start(files.config(), files.log(), placement);
    } catch (IOException | RuntimeException e) {
      throw new ProxyStartException(
          Reason.FAILED,
          "cannot start the proxy for port " + record.port() + ": " + e.getMessage());
    }
    OptionalLong ticks = ctx.processes().startTicks(started.pid());
    child = started.child();
    began();
    ctx.stats().launches.incrementAndGet();
    return new Spawned(
        written.withProcess(started.pid(), ticks.orElse(0), placement.describe()), started);
  }

  /** A live process found in the state dir is the current one. */
  void adopted() {
    began();
  }

  /** A move's successor is the current one now. */
  void movedIn(ProxyLauncher.Started successor, Placement successorPlacement) {
    placement = successorPlacement;
    child = successor.child();
    began();
  }

  private void began() {
    startedAt = ctx.clock().instant();
    oomBaseline = placement.oomKills();
  }

  /** The current process ended: records why ({@link #describe}) and forgets the child. */
  String ended(int code, String key, int port) {
    String why = describe(code, key, port);
    lastExit = Optional.of(why);
    files.writeLastExit(ctx.clock().millis(), why);
    child = Optional.empty();
    return why;
  }

  /** How a process of this proxy ended; an OOM kill of its group is counted here, once. */
  String describe(int code, String key, int port) {
    long now = placement.oomKills();
    if (now > 0 && now > Math.max(oomBaseline, 0)) {
      // One exit is one OOM kill, whatever the counter moved by: with cgroup v2's
      // memory.oom.group=1 the kernel (6.1, seen in KernelReliabilityIT) counts the victim
      // twice in memory.events oom_kill, once as the victim and once as a group member.
      oomKills++;
      ctx.stats().oomKills.incrementAndGet();
      oomBaseline = now;
      ctx.listener().oomKilled(key, port);
      return "was OOM-killed (cgroup " + placement.describe() + " oom_kill=" + now + ")";
    }
    if (code < 0) {
      return "is gone (not our child; exit status unknown)";
    }
    if (code > 128) {
      return "was killed by signal " + (code - 128);
    }
    return "exited with code " + code;
  }

  /**
   * SIGTERM, then SIGKILL after the stop timeout, and, for our own child, until it is reaped (gone
   * from /proc's view is not yet reaped: a zombie holds its pid until the waiter's next look);
   * called outside the lock. Whether the process was alive.
   */
  static boolean terminate(ProxyContext ctx, long pid, long ticks, Optional<Process> ours) {
    boolean wasAlive = ctx.processes().alive(pid, ticks);
    if (ctx.processes().terminate(pid, ticks, ctx.config().stopTimeout())) {
      LOG.warn(
          "proxy pid {} ignored SIGTERM for {} ms; killed it",
          pid,
          ctx.config().stopTimeout().toMillis());
    }
    ours.ifPresent(p -> {
      try {
        if (!p.waitFor(2, TimeUnit.SECONDS)) {
          LOG.warn("proxy pid {} was not reaped within 2 s of its end", p.pid());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    return wasAlive;
  }
}

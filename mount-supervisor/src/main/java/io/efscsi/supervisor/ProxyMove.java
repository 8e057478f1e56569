package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.process.ControlClient;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.upgrade.ListenerHandover;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves one running proxy to the build this plugin launches, on its port, without the port ever
 * refusing a connection: the old process's listening socket is copied ({@link ListenerHandover})
 * and handed to a successor that starts in standby in a group of its own; once the successor
 * answers {@code status} with this build and its {@code ping} reaches the mount target through TLS,
 * it is told to {@code serve}, the record names it (the commit), and the old process is retired
 * ({@code drain}, or SIGTERM for a release that does not know it). The kernel's connections to the
 * old process end with a FIN or RST and reconnect to the same socket, now served by the successor.
 *
 * <p>Before the commit, any failure kills the successor and leaves the old proxy as it was. Every
 * phase is in the record ({@link ProxyRecord.Move}), so a plugin killed mid-move leaves one proxy
 * per port after {@link MoveRecovery} ran at adoption.
 */
final class ProxyMove {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyMove.class);

  /**
   * How long a move waits for one control answer (status, serve, drain): longer than a health
   * round's, since a move has time and a loaded node (or an emulated one) answers slowly.
   */
  static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);

  /** How long a drained proxy has to relay its last replies and exit before SIGTERM. */
  static final Duration DRAIN_WAIT = Duration.ofSeconds(5);

  /** What became of one move. */
  enum Result {
    MOVED,
    FAILED,
    SKIPPED
  }

  /**
   * @param reason a short label (skipped: busy, refusing, no-pidfd, gone, not-listening; failed:
   *     cgroup, launch, standby, build, ping, serve, superseded)
   * @param detail what happened, for the log and the event
   * @param connections the kernel connections the old process had
   */
  record Outcome(
      Result result,
      String reason,
      String detail,
      Duration took,
      long oldPid,
      long newPid,
      String from,
      long connections) {

    static Outcome skipped(String reason, String detail, String from) {
      return new Outcome(Result.SKIPPED, reason, detail, Duration.ZERO, 0, 0, from, 0);
    }
  }

  private final ProxyContext ctx;

  ProxyMove(ProxyContext ctx) {
    this.ctx = ctx;
  }

  /** Moves {@code s} to {@code ctx.launcher().build()}; never throws. */
  Outcome run(Supervised s) {
    Optional<MoveSteps.Start> begun = s.moves().begin();
    if (begun.isEmpty()) {
      return Outcome.skipped("busy", "not running steadily (starting, healing or stopped)", "");
    }
    MoveSteps.Start start = begun.get();
    try {
      return move(s, start);
    } finally {
      s.moves().end();
    }
  }

  private Outcome move(Supervised s, MoveSteps.Start start) {
    ProxyRecord old = start.record();
    String from = old.proxyBuild();
    long began = System.nanoTime();
    Map<?, ?> status;
    try {
      status = statusOf(s.controlSocket());
    } catch (IOException e) {
      return Outcome.skipped("busy", "its status does not answer: " + e.getMessage(), from);
    }
    from = String.valueOf(status.get("build") instanceof String b && !b.isEmpty() ? b : from);
    if (Boolean.FALSE.equals(status.get("accepting"))) {
      return Outcome.skipped("refusing", "its port refuses connections (target down)", from);
    }
    long connections =
        status.get("client_connections") instanceof Long c ? c : 0; // absent in old releases
    ListenerHandover.Taken taken;
    try {
      taken =
          ListenerHandover.take(
              old.pid(), old.port(), () -> ctx.processes().alive(old.pid(), old.startTicks()));
    } catch (ListenerHandover.NotTaken e) {
      return Outcome.skipped(e.reason(), e.getMessage(), from);
    } catch (IOException e) {
      return Outcome.skipped("no-pidfd", e.getMessage(), from);
    }
    Successor next = null;
    try {
      next = launch(s, start, taken);
    } catch (MoveFailed e) {
      return failed(e, began, old, from, connections);
    } finally {
      taken.close(); // kept, the plugin would hold a listening port nobody accepts on
    }
    try {
      prove(s, next);
      ProxyRecord.Move retiring =
          new ProxyRecord.Move(
              ProxyRecord.Move.RETIRING, old.pid(), old.startTicks(), start.placement().describe());
      if (!s.moves()
          .commit(
              start.generation(),
              next.started,
              next.ticks,
              next.placement,
              ctx.launcher().build(),
              retiring)) {
        throw new MoveFailed("superseded", "the proxy exited or was stopped during the move");
      }
    } catch (MoveFailed e) {
      undo(s, next);
      return failed(e, began, old, from, connections);
    }
    retire(s, old, next);
    finish(s, start.placement(), next);
    Duration took = Duration.ofNanos(System.nanoTime() - began);
    LOG.info(
        "moved proxy for port {} from build {} (pid {}) to {} (pid {}) in {} ms; {} kernel"
            + " connections reconnect to it",
        old.port(),
        from.isEmpty() ? "unknown" : from,
        old.pid(),
        ctx.launcher().build(),
        next.started.pid(),
        took.toMillis(),
        connections);
    return new Outcome(
        Result.MOVED, "moved", "", took, old.pid(), next.started.pid(), from, connections);
  }

  private Outcome failed(MoveFailed e, long began, ProxyRecord old, String from, long connections) {
    LOG.warn("move of proxy for port {} failed ({}): {}", old.port(), e.reason, e.getMessage());
    return new Outcome(
        Result.FAILED,
        e.reason,
        e.getMessage(),
        Duration.ofNanos(System.nanoTime() - began),
        old.pid(),
        0,
        from,
        connections);
  }

  private record Successor(
      ProxyLauncher.Started started, long ticks, Placement placement, java.nio.file.Path socket) {}

  private static final class MoveFailed extends Exception {
    private static final long serialVersionUID = 1L;
    final String reason;

    MoveFailed(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  /** The successor's group recorded first, then its launch in standby on the copied socket. */
  private Successor launch(Supervised s, MoveSteps.Start start, ListenerHandover.Taken taken)
      throws MoveFailed {
    ProxyRecord old = start.record();
    String group = successorGroup(old, start.placement());
    Placement placement;
    try {
      placement = ctx.placer().place(group, ctx.config().limits());
    } catch (IOException | RuntimeException e) {
      throw new MoveFailed("cgroup", "cannot create the successor's group: " + e.getMessage());
    }
    ProxyRecord.Move launching =
        new ProxyRecord.Move(ProxyRecord.Move.LAUNCHING, 0, 0, placement.describe());
    if (!s.moves().record(start.generation(), launching)) {
      placement.remove();
      throw new MoveFailed("superseded", "the proxy exited or was stopped during the move");
    }
    ProxyFiles files = s.files();
    ProxyLauncher.Started started;
    try {
      Files.deleteIfExists(files.nextControlSocket(group));
      Map<String, String> cfg = new HashMap<>(old.config());
      cfg.put(ProxyConfig.Keys.CONTROL_SOCKET, files.nextControlSocket(group).toString());
      ProxyConfig.fromMap(cfg).write(files.nextConfig(group));
      started =
          ctx.launcher()
              .startOnListener(files.nextConfig(group), files.log(), placement, taken.fd());
    } catch (IOException | RuntimeException e) {
      placement.remove();
      files.deleteNext();
      throw new MoveFailed("launch", "cannot start the successor: " + e.getMessage());
    }
    OptionalLong ticks = ctx.processes().startTicks(started.pid());
    Successor next =
        new Successor(started, ticks.orElse(0), placement, files.nextControlSocket(group));
    s.moves()
        .record(
            start.generation(),
            new ProxyRecord.Move(
                ProxyRecord.Move.LAUNCHING, started.pid(), next.ticks, placement.describe()));
    return next;
  }

  /**
   * The group the successor gets: never the old process's (two JVMs under one memory limit), so a
   * proxy's group alternates between its id and {@code <id>-b}.
   */
  static String successorGroup(ProxyRecord r, Placement current) {
    return current.describe().endsWith(r.id() + "-b") || current.describe().contains(r.id() + "-b-")
        ? r.id()
        : r.id() + "-b";
  }

  /** The group name a successor placed as {@code cgroup} (its description) was given. */
  static String groupOf(ProxyRecord r, String cgroup) {
    return cgroup.endsWith(r.id() + "-b") || cgroup.contains(r.id() + "-b-")
        ? r.id() + "-b"
        : r.id();
  }

  /** Standby answers with this build, its ping gets through, then it serves. */
  private void prove(Supervised s, Successor next) throws MoveFailed {
    java.nio.file.Path socket = next.socket();
    long deadline = System.nanoTime() + ctx.config().startTimeout().toNanos();
    Map<?, ?> status = null;
    while (status == null) {
      if (ctx.owner().closed()) {
        throw new MoveFailed("closing", "the supervisor is shutting down");
      }
      if (!ctx.processes().alive(next.started.pid(), next.ticks)) {
        throw new MoveFailed("standby", "the successor exited at start; " + s.files().logTail());
      }
      try {
        status = statusOf(socket);
      } catch (IOException notYet) {
        if (System.nanoTime() > deadline) {
          throw new MoveFailed(
              "standby",
              "the successor did not answer within "
                  + ctx.config().startTimeout().toMillis()
                  + " ms");
        }
        sleep(Duration.ofMillis(25));
      }
    }
    if (!ctx.launcher().build().equals(status.get("build"))) {
      throw new MoveFailed(
          "build",
          "the successor reports build " + status.get("build") + ", not " + ctx.launcher().build());
    }
    String ping = ask(socket, "ping", Duration.ofSeconds(15), "ping");
    if (!ping.startsWith("ok")) {
      throw new MoveFailed("ping", "the successor cannot reach the mount target: " + ping);
    }
    String serve = ask(socket, "serve", CONTROL_TIMEOUT, "serve");
    if (!serve.startsWith("ok")) {
      throw new MoveFailed("serve", "the successor did not start serving: " + serve);
    }
  }

  private static String ask(java.nio.file.Path socket, String command, Duration t, String reason)
      throws MoveFailed {
    try {
      return ControlClient.ask(socket, command, t);
    } catch (IOException e) {
      throw new MoveFailed(reason, command + " failed: " + e.getMessage());
    }
  }

  /** Before the commit: the successor goes, the old proxy never noticed. */
  private void undo(Supervised s, Successor next) {
    if (ctx.processes().terminate(next.started.pid(), next.ticks, Duration.ofSeconds(2))) {
      LOG.warn("successor pid {} ignored SIGTERM; killed it", next.started.pid());
    }
    next.started.child().ifPresent(ProxyMove::awaitReaped);
    Adoption.killAll(next.placement, ctx.processes(), "successor of port " + s.port());
    next.placement.remove();
    s.files().deleteNext();
  }

  /**
   * The old process goes: {@code drain} (it relays the replies still due and closes each kernel
   * connection with a FIN), or SIGTERM when it does not know the command; killed if it outlives
   * both.
   */
  private void retire(Supervised s, ProxyRecord old, Successor next) {
    String answer;
    try {
      answer = ControlClient.ask(s.controlSocket(), "drain", CONTROL_TIMEOUT);
    } catch (IOException e) {
      answer = "error " + e.getMessage();
    }
    if (answer.startsWith("ok")) {
      // the old proxy's gate may have stopped the shared socket (its upstream failed) between the
      // successor's serve and this drain: serve again re-checks that it listens
      try {
        ControlClient.ask(next.socket(), "serve", CONTROL_TIMEOUT);
      } catch (IOException e) {
        LOG.warn(
            "proxy for port {}: a second serve was not answered: {}", s.port(), e.getMessage());
      }
      long deadline = System.nanoTime() + DRAIN_WAIT.toNanos();
      while (System.nanoTime() < deadline && ctx.processes().alive(old.pid(), old.startTicks())) {
        sleep(Duration.ofMillis(20));
      }
    }
    if (ctx.processes().terminate(old.pid(), old.startTicks(), ctx.config().stopTimeout())) {
      LOG.warn("old proxy pid {} ignored SIGTERM; killed it", old.pid());
    }
  }

  /** The successor's socket becomes the proxy's own; the old group and the move's files go. */
  private void finish(Supervised s, Placement oldPlacement, Successor next) {
    ProxyFiles files = s.files();
    try {
      Files.move(
          next.socket(),
          files.controlSocket(),
          StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
      s.moves().writeConfigFile();
    } catch (IOException e) {
      LOG.error(
          "proxy for port {} serves but its control socket could not be renamed: {}",
          s.port(),
          e.getMessage());
    }
    files.deleteNext();
    Adoption.killAll(oldPlacement, ctx.processes(), "old group of port " + s.port());
    oldPlacement.remove();
  }

  private static Map<?, ?> statusOf(java.nio.file.Path socket) throws IOException {
    String line = ControlClient.ask(socket, "status", CONTROL_TIMEOUT);
    if (!(Json.parse(line) instanceof Map<?, ?> m)) {
      throw new IOException("status is not a JSON object: " + line);
    }
    return m;
  }

  private static void awaitReaped(Process p) {
    try {
      p.waitFor(2, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

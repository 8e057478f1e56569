package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.supervisor.process.ControlClient;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import io.efscsi.supervisor.state.SupervisorLock;
import io.efscsi.supervisor.upgrade.ListenerHandover;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A state dir's proxies handed to another program on their ports, with no supervisor running (a
 * rollback to the Go driver: efs-utils' watchdog starts its own tunnels). The kernel's mount is
 * never left without a listener it can reach: the proxy lets the port go ({@code release}) and
 * keeps relaying the kernel's connection; once the other tunnel listens, the proxy relays the
 * replies still due and ends the connection ({@code drain}), and the kernel reconnects to the
 * tunnel at its next request. A proxy handed over is forgotten: its record, files and certificate
 * dir go, so that a supervisor started later does not start it again.
 */
public final class Handoff {

  /**
   * One proxy as its record describes it.
   *
   * @param key its mount key
   * @param config its proxy configuration (proxy-core's keys)
   * @param users its users (staging paths, or a taken-over mount's mount points)
   * @param moving the phase of a rolling-upgrade move in flight, if any
   */
  public record Held(
      String id,
      String key,
      int port,
      long pid,
      Map<String, String> config,
      Set<String> users,
      Optional<String> moving) {

    public Held {
      config = Map.copyOf(config);
      users = Set.copyOf(users);
    }
  }

  /**
   * How one hand-over went; times from the port being let go.
   *
   * @param tunnelListeningMs when the other tunnel listened (-1: not waited for)
   * @param drainedMs when our proxy had ended the kernel's connection and exited
   * @param reconnectedMs when the kernel had a new connection to the port
   */
  public record Result(
      int port,
      boolean handed,
      String detail,
      long tunnelListeningMs,
      long drainedMs,
      Optional<Long> reconnectedMs) {}

  private static final Duration ASK = Duration.ofSeconds(5);
  private static final Duration EXIT = Duration.ofSeconds(5);

  private final Path stateDir;
  private final Optional<StateStore> store;

  private Handoff(Path stateDir, Optional<StateStore> store) {
    this.stateDir = stateDir;
    this.store = store;
  }

  /** The proxies of {@code stateDir} on this host. */
  public static Handoff of(Path stateDir) throws IOException {
    return new Handoff(stateDir, Optional.of(new StateStore(stateDir)));
  }

  /**
   * The proxies of {@code stateDir}, only to look at (a dry run): nothing is written, not even an
   * unreadable record moved aside; handing over refuses.
   */
  public static Handoff reading(Path stateDir) {
    return new Handoff(stateDir, Optional.empty());
  }

  private StateStore store() {
    return store.orElseThrow(() ->
        new IllegalStateException(
            "a handoff opened only to read " + stateDir + " changes nothing"));
  }

  public Path stateDir() {
    return stateDir;
  }

  /** Every proxy the state dir records, by port. */
  public List<Held> proxies() throws IOException {
    List<Held> out = new ArrayList<>();
    for (ProxyRecord r : store.isPresent() ? store.get().list() : StateStore.peek(stateDir)) {
      out.add(
          new Held(
              r.id(),
              r.key(),
              r.port(),
              r.pid(),
              r.config(),
              r.users(),
              r.move().map(ProxyRecord.Move::phase)));
    }
    return out;
  }

  /** Whether a supervisor runs on the state dir (it would start again what this stops). */
  public boolean supervised() throws IOException {
    return SupervisorLock.held(stateDir);
  }

  /** The lock file a running supervisor holds, for messages. */
  public Path lockFile() {
    return stateDir.resolve(SupervisorLock.FILE);
  }

  /**
   * Hands {@code p}'s port to the program that binds it next: {@code listenWait} is how long that
   * may take once the port is let go, {@code reconnectWait} how long to watch for the kernel's new
   * connection (an idle mount makes none until its next request).
   */
  public Result handOver(Held p, Duration listenWait, Duration reconnectWait)
      throws IOException, InterruptedException {
    store(); // refused before anything is asked of the proxy when only reading
    int port = p.port();
    String socket = p.config().get(Keys.CONTROL_SOCKET);
    if (socket == null) {
      return new Result(port, false, "its proxy has no control socket", -1, -1, Optional.empty());
    }
    Path control = Path.of(socket);
    Set<Long> before = ListenerHandover.establishedInodes(port);
    long t0 = System.nanoTime();
    String answer = ControlClient.ask(control, "release", ASK);
    long listening;
    String how;
    if (answer.startsWith("ok released")) {
      Optional<Long> tunnel = Optional.empty();
      long until = t0 + listenWait.toNanos();
      while (tunnel.isEmpty() && System.nanoTime() < until) {
        tunnel = ListenerHandover.listeningInode(port);
        if (tunnel.isEmpty()) {
          Thread.sleep(10);
        }
      }
      if (tunnel.isEmpty()) {
        return new Result(
            port,
            false,
            "nothing listened on the port within "
                + listenWait.toSeconds()
                + " s of our proxy letting it go; our proxy still relays the mount's connection"
                + " but takes no new one",
            -1,
            -1,
            Optional.empty());
      }
      listening = ms(t0);
      how = "released";
    } else if (answer.contains("unknown command")) {
      // a proxy of a release before `release`: the port goes with the connection, at once
      listening = -1;
      how = "drained at once (its proxy predates release)";
    } else {
      return new Result(port, false, "our proxy answered " + answer, -1, -1, Optional.empty());
    }
    String drained = ControlClient.ask(control, "drain", ASK);
    if (!drained.startsWith("ok draining")) {
      return new Result(
          port, false, "our proxy answered drain with " + drained, listening, -1, Optional.empty());
    }
    awaitExit(control);
    long drainedMs = ms(t0);
    Optional<Long> reconnected = Optional.empty();
    long until = System.nanoTime() + reconnectWait.toNanos();
    while (reconnected.isEmpty() && System.nanoTime() < until) {
      Set<Long> now = ListenerHandover.establishedInodes(port);
      now.removeAll(before);
      if (!now.isEmpty()) {
        reconnected = Optional.of(ms(t0));
      } else {
        Thread.sleep(10);
      }
    }
    forget(p);
    return new Result(port, true, how, listening, drainedMs, reconnected);
  }

  /** Stops a proxy no mount uses and forgets it. */
  public void stop(Held p) throws IOException, InterruptedException {
    store();
    String socket = p.config().get(Keys.CONTROL_SOCKET);
    if (socket != null) {
      ControlClient.ask(Path.of(socket), "drain", ASK);
      awaitExit(Path.of(socket));
    }
    forget(p);
  }

  /**
   * Until the proxy has exited: it removes its control socket as it does (seen from any PID
   * namespace, as the handback pod has none of the host's).
   */
  private static void awaitExit(Path control) throws InterruptedException {
    long by = System.nanoTime() + EXIT.toNanos();
    while (Files.exists(control) && System.nanoTime() < by) {
      Thread.sleep(10);
    }
  }

  /** Its record and files, and its certificate dir (under the state dir's {@code certs}). */
  private void forget(Held p) throws IOException {
    store().deleteWithFiles(p.id());
    String cert = p.config().get(Keys.CERT_FILE);
    Path certs = stateDir.resolve("certs").toAbsolutePath().normalize();
    if (cert != null) {
      Path dir = Path.of(cert).toAbsolutePath().normalize().getParent();
      if (dir != null && dir.startsWith(certs) && !dir.equals(certs) && Files.isDirectory(dir)) {
        try (Stream<Path> walk = Files.walk(dir)) {
          for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(f);
          }
        }
      }
    }
  }

  private static long ms(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }
}

package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.health.TargetProbe;
import io.efscsi.supervisor.host.MountPresence;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.Unmounter;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import io.efscsi.supervisor.state.SupervisorLock;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the node's proxies: one per mount key, each in its own cgroup and session, on a port that
 * stays the same across restarts. Survives its own death: everything it needs to adopt the proxies
 * again is in the state dir. {@link #ensure} and {@link #release} are what NodeStage and
 * NodeUnstage call; the reconciler and health checks run on their own.
 *
 * <p>It is the fleet: it builds its parts and their {@link ProxyContext}, starts them (adoption,
 * the reconciler, health rounds, liveness polls, rolling upgrades), answers for all proxies at once
 * (status, usage) and closes them. The leases (which proxy serves which key for which users, on
 * which port) are the {@link LeaseTable}'s; each proxy's life is its {@link Supervised}'s. No part
 * reaches back here.
 */
public final class ProxySupervisor implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ProxySupervisor.class);

  /** What the node hears about (events, metrics). */
  public interface Listener {
    default void restarted(String key, int port, String reason, long restarts) {}

    default void crashLooping(String key, int port, String lastExit) {}

    default void oomKilled(String key, int port) {}

    default void orphanUnmounted(int port, List<String> mountPoints) {}

    /**
     * The proxy's mount target stopped answering its pings and the supervisor's own probe: the
     * network or the target is down, not the proxy, which stays up.
     */
    default void targetUnreachable(String key, int port, String reason) {}

    /** The mount target answers again after {@code down}. */
    default void targetReachable(String key, int port, java.time.Duration down) {}

    /**
     * A proxy was moved on its port from build {@code from} ("" when unknown: a release before
     * rolling upgrades) to {@code to} in {@code took}; {@code connections} kernel connections
     * reconnected to it.
     */
    default void upgraded(
        String key, int port, String from, String to, java.time.Duration took, long connections) {}

    /** A move failed; the proxy runs on, on its old build. */
    default void upgradeFailed(String key, int port, String reason) {}

    /** Rolling upgrades stopped until the plugin restarts. */
    default void upgradesStopped(String reason) {}
  }

  /** A proxy handed to a user: mount {@code 127.0.0.1:/…} with {@code port=}. */
  public record Lease(String key, int port) {}

  private final SupervisorConfig config;
  private final StateStore store;
  private final CgroupPlacer placer;
  private final Clock clock;
  private final Reconciler reconciler;
  private final RollingUpgrade upgrades;
  private final ScheduledExecutorService upgrader =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("proxy-upgrade").daemon().factory());
  private final ProxyContext context;
  private final SupervisorStats stats = new SupervisorStats();
  private final LeaseTable leases;
  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("proxy-supervisor").daemon().factory());
  private volatile boolean started;
  private volatile boolean closed;

  /** Held while this supervisor runs: a handback waits until nobody holds it. */
  private Optional<SupervisorLock> lock = Optional.empty();

  private final Restarts restarts = new Restarts();

  public ProxySupervisor(
      SupervisorConfig config,
      CgroupPlacer placer,
      ProxyLauncher launcher,
      ProcessTable processes,
      MountTable mountTable,
      Unmounter unmounter,
      PortAllocator.BindProbe probe,
      Clock clock,
      Listener listener)
      throws IOException {
    this.config = config;
    this.store = new StateStore(config.stateDir());
    this.placer = placer;
    this.clock = clock;
    PortAllocator ports = new PortAllocator(config.portLower(), config.portUpper(), probe);
    MountPresence presence = new MountPresence(config.absentReads(), config.mountGrace(), clock);
    this.context =
        new ProxyContext(
            config,
            store.dir(),
            placer,
            launcher,
            processes,
            clock,
            listener,
            scheduler,
            stats,
            TargetProbe.pinging(config.healthInterval(), config.healthInterval(), clock),
            new ProxyContext.Owner() {
              @Override
              public void writeRecord(ProxyRecord r) throws IOException {
                leases.writeRecord(r);
              }

              @Override
              public void reconcileSoon() {
                ProxySupervisor.this.reconcileSoon();
              }

              @Override
              public void runRestart(Runnable restart) {
                ProxySupervisor.this.runRestart(restart);
              }

              @Override
              public boolean closed() {
                return closed;
              }
            });
    this.leases = new LeaseTable(context, store, ports, presence, mountTable);
    this.reconciler = new Reconciler(context, mountTable, presence, unmounter, leases);
    this.upgrades = new RollingUpgrade(context, leases);
  }

  public SupervisorStats stats() {
    return stats;
  }

  private List<Supervised> all() {
    return leases.all();
  }

  /**
   * Adopts every proxy in the state dir and repairs what a plugin killed mid-call left ({@link
   * Adoption}), runs a first reconcile and starts the periodic work.
   */
  public void start() throws IOException {
    lock = SupervisorLock.take(config.stateDir());
    leases.adopt();
    reconcileNow();
    long every = config.reconcileInterval().toMillis();
    scheduler.scheduleWithFixedDelay(this::reconcileQuietly, every, every, TimeUnit.MILLISECONDS);
    long health = config.healthInterval().toMillis();
    scheduler.scheduleWithFixedDelay(this::checkHealth, health, health, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(this::pollLiveness, 500, 500, TimeUnit.MILLISECONDS);
    upgrader.scheduleWithFixedDelay(
        upgrades::round,
        config.upgrades().delay().toMillis(),
        Math.max(1, config.upgrades().interval().toMillis()),
        TimeUnit.MILLISECONDS);
    started = true;
    LOG.info(
        "proxy supervisor started: {} proxies in {}, ports {}-{}, cgroup adapter {}",
        leases.size(),
        store.dir(),
        config.portLower(),
        config.portUpper(),
        placer.kind());
  }

  public boolean started() {
    return started;
  }

  /**
   * The proxy for a mount key, started if needed, with {@code user} (a staging path) recorded as
   * one of its users. Returns once the proxy answers on its control socket; throws when it cannot
   * come up (the caller must not mount).
   */
  public Lease ensure(String key, ProxySpec spec, String user) throws IOException {
    return leases.ensure(key, spec, user);
  }

  /**
   * Starts a proxy of ours on a port that a kernel mount made by someone else already uses (the Go
   * driver's efs-utils, whose proxy died with its container), with the mount points as its users.
   * From then on it is like any other: a state record, its own cgroup, adoption, the reconciler,
   * release when its users are gone. Refuses a key or port of ours and a port something listens on;
   * the port is not taken from the allocator's range, but the allocator never hands it out while a
   * mount carries it.
   */
  public Lease takeOver(String key, int port, ProxySpec spec, Set<String> users)
      throws IOException {
    return leases.takeOver(key, port, spec, users);
  }

  /**
   * Drops {@code user} from the key's proxy. When nobody is left and no mount carries its port any
   * more, the proxy is stopped and its port released; while a mount remains, the reconciler decides
   * later.
   */
  public void release(String key, String user) throws IOException {
    leases.release(key, user);
  }

  /** Whether a proxy of ours holds the port (its own or a taken-over one). */
  public boolean holds(int port) {
    return leases.holds(port);
  }

  /** Where TLS client certificates for the proxies are kept (0700, beside the records). */
  public java.nio.file.Path certificateDir() throws IOException {
    java.nio.file.Path dir = config.stateDir().resolve("certs");
    if (!java.nio.file.Files.isDirectory(dir)) {
      java.nio.file.Files.createDirectories(dir);
      java.nio.file.Files.setPosixFilePermissions(
          dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }
    return dir;
  }

  /** {@link #release} for whichever proxy lists {@code user} (NodeUnstage knows only its path). */
  public void releaseUser(String user) throws IOException {
    leases.releaseUser(user);
  }

  /** The lease a user holds, if any. */
  public Optional<Lease> leaseOf(String user) {
    return leases.leaseOf(user);
  }

  /** One reconcile pass now; returns what it did. */
  public Reconciler.Report reconcileNow() throws IOException {
    return reconciler.pass();
  }

  void reconcileSoon() {
    scheduler.execute(this::reconcileQuietly);
  }

  private void reconcileQuietly() {
    try {
      reconciler.pass();
    } catch (IOException | RuntimeException e) {
      stats.reconcileFailures.incrementAndGet();
      LOG.error("reconcile pass failed (nothing was changed): {}", e.toString());
    }
  }

  private void checkHealth() {
    for (Supervised s : all()) {
      Thread.ofVirtual().start(s::checkHealth);
      s.noteHealthyTime(clock.instant());
    }
  }

  private void pollLiveness() {
    for (Supervised s : all()) {
      s.pollLiveness();
    }
  }

  /** Every supervised proxy. */
  public List<ProxyStatus> status() {
    return all().stream().map(Supervised::status).toList();
  }

  /**
   * What every proxy uses: cgroup memory and its control socket's counters, asked of all proxies at
   * once, each bounded by {@code timeout}. Changes nothing.
   */
  public List<ProxyUsage> usage(java.time.Duration timeout) {
    List<java.util.concurrent.CompletableFuture<ProxyUsage>> asks = new ArrayList<>();
    for (Supervised s : all()) {
      asks.add(
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> s.usage(timeout), Thread.ofVirtual()::start));
    }
    return asks.stream().map(java.util.concurrent.CompletableFuture::join).toList();
  }

  /**
   * The port range as the allocator sees it: held by a proxy of ours ({@code inUse}), carried by
   * another loopback NFS mount, listened on by something else; the rest is free.
   */
  public record PortUse(int inUse, int total, int mounted, int listened) {

    /** Nothing but our proxies in the range. */
    public PortUse(int inUse, int total) {
      this(inUse, total, 0, 0);
    }

    /** What the allocator would hand out. */
    public int free() {
      return total - inUse - mounted - listened;
    }
  }

  /** The port range counted by the allocator's own rules (a fresh mount table read). */
  public PortUse portUse() {
    return leases.portUse();
  }

  /** The status of one key's proxy. */
  public Optional<ProxyStatus> status(String key) {
    return leases.status(key);
  }

  /** Stops every proxy (tests, benchmarks, decommissioning a node). Not called on shutdown. */
  public void stopAll() {
    for (Supervised s : all()) {
      s.stop();
      leases.forget(s);
    }
  }

  /** Stops the supervisor's own threads; the proxies keep running for the next one to adopt. */
  @Override
  public void close() {
    closed = true; // from here a proxy's exit is the next supervisor's to see (it adopts it)
    scheduler.shutdownNow();
    // a move in flight sees `closed` and undoes itself (or finishes, once committed); a plugin
    // killed instead leaves its phase in the record for the next one (ProxyMove.recover)
    upgrader.shutdown();
    try {
      if (!upgrader.awaitTermination(20, TimeUnit.SECONDS)) {
        LOG.warn("a proxy move was still running at shutdown; the next plugin finishes it");
        upgrader.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    started = false;
    // a restart in flight finishes (or gives up) before close returns
    restarts.close(java.time.Duration.ofSeconds(5));
    lock.ifPresent(l -> {
      try {
        l.close();
      } catch (IOException e) {
        LOG.warn("cannot let {} go: {}", SupervisorLock.FILE, e.toString());
      }
    });
    lock = Optional.empty();
  }

  /** Runs a restart on a thread of its own unless the supervisor is closed. */
  void runRestart(Runnable restart) {
    restarts.run(restart);
  }
}

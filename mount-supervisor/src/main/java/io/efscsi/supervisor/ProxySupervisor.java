package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.health.TargetProbe;
import io.efscsi.supervisor.host.MountInfo;
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
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * <p>Over 400 lines because it is the module's one service: every public call (ensure, takeOver,
 * release, status, usage, reconcileNow, stop and close) with the lock that keeps the key, port and
 * user tables consistent between them, plus building its parts and their {@link ProxyContext}. The
 * parts (one {@link Supervised} per proxy, {@link Adoption}, {@link Reconciler}, {@link
 * ProxyHealth}) are classes of their own that never reach back here.
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
  private final ProxyLauncher launcher;
  private final ProcessTable processes;
  private final MountTable mountTable;
  private final Clock clock;
  private final Listener listener;
  private final PortAllocator ports;
  private final MountPresence presence;
  private final Reconciler reconciler;
  private final RollingUpgrade upgrades;
  private final ScheduledExecutorService upgrader =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("proxy-upgrade").daemon().factory());
  private final ProxyContext context;
  private final ProxyContext.Fleet fleet;
  private final SupervisorStats stats = new SupervisorStats();
  private final Map<String, Supervised> byKey = new LinkedHashMap<>();
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
    this.launcher = launcher;
    this.processes = processes;
    this.mountTable = mountTable;
    this.clock = clock;
    this.listener = listener;
    this.ports = new PortAllocator(config.portLower(), config.portUpper(), probe);
    this.presence = new MountPresence(config.absentReads(), config.mountGrace(), clock);
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
                ProxySupervisor.this.writeRecord(r);
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
    this.fleet =
        new ProxyContext.Fleet() {
          @Override
          public List<Supervised> all() {
            return ProxySupervisor.this.all();
          }

          @Override
          public void forget(Supervised s) {
            ProxySupervisor.this.forget(s);
          }

          @Override
          public Set<Integer> mountedPorts() throws IOException {
            return ProxySupervisor.this.mountedPorts();
          }
        };
    this.reconciler = new Reconciler(context, mountTable, presence, unmounter, fleet);
    this.upgrades = new RollingUpgrade(context, fleet);
  }

  public SupervisorStats stats() {
    return stats;
  }

  void writeRecord(ProxyRecord r) throws IOException {
    store.write(r);
    stats.stateWrites.incrementAndGet();
  }

  synchronized List<Supervised> all() {
    return new ArrayList<>(byKey.values());
  }

  /**
   * Adopts every proxy in the state dir and repairs what a plugin killed mid-call left ({@link
   * Adoption}), runs a first reconcile and starts the periodic work.
   */
  public void start() throws IOException {
    lock = SupervisorLock.take(config.stateDir());
    new Adoption(context, store, ports, presence, byKey, this, fleet).run();
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
        byKey.size(),
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
    Supervised s;
    boolean fresh = false;
    synchronized (this) {
      s = byKey.get(key);
      if (s == null) {
        s = create(key, spec, user);
        fresh = true;
      } else {
        Set<String> users = new HashSet<>(s.record().users());
        if (users.add(user)) {
          s.setUsers(users);
        }
        presence.forget(s.port());
        presence.watch(s.port());
      }
    }
    if (fresh) {
      try {
        s.launchAndAwait();
      } catch (ProxyStartException e) {
        forget(s);
        throw e;
      }
      return new Lease(key, s.port());
    }
    return awaitExisting(s);
  }

  private Supervised create(String key, ProxySpec spec, String user) throws IOException {
    return register(key, ports.allocate(mountedPorts()), spec, Set.of(user));
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
    Supervised s;
    synchronized (this) {
      if (byKey.containsKey(key) || ports.isHeld(port)) {
        throw new ProxyStartException(
            ProxyStartException.Reason.CONFIG,
            "port " + port + " or key " + key + " already belongs to a proxy of ours");
      }
      if (!ports.bindable(port)) {
        throw new ProxyStartException(
            ProxyStartException.Reason.BIND_FAILED,
            "something still listens on 127.0.0.1:" + port + "; not taking it over");
      }
      ports.hold(port);
      s = register(key, port, spec, users);
    }
    try {
      s.launchAndAwait();
    } catch (ProxyStartException e) {
      forget(s);
      throw e;
    }
    stats.takeovers.incrementAndGet();
    LOG.info("took over 127.0.0.1:{} for {} (key {})", port, users, key);
    return new Lease(key, port);
  }

  private Supervised register(String key, int port, ProxySpec spec, Set<String> users)
      throws IOException {
    String id = "proxy-" + port;
    Map<String, String> cfg = spec.config(port, store.dir().resolve(id + ".sock")).toMap();
    ProxyRecord r = new ProxyRecord(id, key, port, 0, 0, "", cfg, users, 0, clock.millis());
    try {
      writeRecord(r);
    } catch (IOException e) {
      ports.release(port);
      throw e;
    }
    presence.watch(port);
    Supervised s = new Supervised(context, r, placer.existing("none:"));
    byKey.put(key, s);
    LOG.info("proxy for key {} gets port {}", key, port);
    return s;
  }

  private Lease awaitExisting(Supervised s) throws IOException {
    if (s.state() == ProxyStatus.State.DOWN) {
      s.restartNow("wanted again");
    }
    long deadline = System.nanoTime() + config.startTimeout().toNanos();
    while (System.nanoTime() < deadline) {
      ProxyStatus st = s.status();
      if (st.state() == ProxyStatus.State.RUNNING) {
        return new Lease(st.key(), st.port());
      }
      if (s.retired()) {
        throw new ProxyStartException(
            ProxyStartException.Reason.UNAVAILABLE,
            "proxy for port " + st.port() + " is being stopped (no mount used it); try again");
      }
      if (st.crashLooping()) {
        throw new ProxyStartException(
            ProxyStartException.Reason.UNAVAILABLE,
            "proxy for port "
                + st.port()
                + " is crash-looping; last exit: "
                + st.lastExit().orElse("?"));
      }
      try {
        Thread.sleep(25);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted waiting for the proxy on port " + st.port(), e);
      }
    }
    ProxyStatus st = s.status();
    throw new ProxyStartException(
        ProxyStartException.Reason.UNAVAILABLE,
        "proxy for port "
            + st.port()
            + " is not running ("
            + st.state()
            + "); last exit: "
            + st.lastExit().orElse("none"));
  }

  /**
   * Drops {@code user} from the key's proxy. When nobody is left and no mount carries its port any
   * more, the proxy is stopped and its port released; while a mount remains, the reconciler decides
   * later.
   */
  public void release(String key, String user) throws IOException {
    Supervised s;
    synchronized (this) {
      s = byKey.get(key);
      if (s == null) {
        return;
      }
      Set<String> users = new HashSet<>(s.record().users());
      if (users.remove(user)) {
        s.setUsers(users);
      }
      if (!users.isEmpty()) {
        return;
      }
      if (mountedPorts().contains(s.port())) {
        LOG.info(
            "proxy for port {} has no users but a mount still carries it; left to the reconciler",
            s.port());
        return;
      }
    }
    s.stop();
    forget(s);
  }

  /** Whether a proxy of ours holds the port (its own or a taken-over one). */
  public boolean holds(int port) {
    return ports.isHeld(port);
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
    for (Supervised s : all()) {
      if (s.record().users().contains(user)) {
        release(s.record().key(), user);
      }
    }
  }

  /** The lease a user holds, if any. */
  public Optional<Lease> leaseOf(String user) {
    return all().stream()
        .filter(s -> s.record().users().contains(user))
        .findFirst()
        .map(s -> new Lease(s.record().key(), s.port()));
  }

  /**
   * Stops and forgets a proxy; its port is released (callers know no mount carries it). Its group
   * and files go before its record: a plugin killed in between leaves a record, whose release the
   * next start finishes ({@link Adoption}), never a group or file no record names.
   */
  void forget(Supervised s) {
    s.retire();
    synchronized (this) {
      if (byKey.get(s.record().key()) == s) {
        byKey.remove(s.record().key());
      }
    }
    s.cleanUp();
    synchronized (this) {
      try {
        store.delete(s.record().id());
      } catch (IOException e) {
        LOG.error("cannot delete the state record of {}: {}", s.record().id(), e.getMessage());
      }
      presence.forget(s.port());
      ports.release(s.port());
    }
  }

  /** Ports carried by loopback NFS mounts in a fresh read of the mount table. */
  Set<Integer> mountedPorts() throws IOException {
    List<MountInfo> table = mountTable.read();
    return MountPresence.byPort(table).keySet();
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
    Set<Integer> mounted;
    try {
      mounted = mountedPorts();
    } catch (IOException e) {
      LOG.warn("cannot read the mount table to count the proxy ports: {}", e.getMessage());
      mounted = Set.of();
    }
    PortAllocator.Census c = ports.census(mounted);
    return new PortUse(c.held(), c.total(), c.mounted(), c.listened());
  }

  /** The status of one key's proxy. */
  public synchronized Optional<ProxyStatus> status(String key) {
    return Optional.ofNullable(byKey.get(key)).map(Supervised::status);
  }

  /** Stops every proxy (tests, benchmarks, decommissioning a node). Not called on shutdown. */
  public void stopAll() {
    for (Supervised s : all()) {
      s.stop();
      forget(s);
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

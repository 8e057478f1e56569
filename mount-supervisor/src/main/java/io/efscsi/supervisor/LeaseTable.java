package io.efscsi.supervisor;

import io.efscsi.supervisor.ProxySupervisor.Lease;
import io.efscsi.supervisor.ProxySupervisor.PortUse;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPresence;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's leases: which proxy serves which mount key, the users that hold it (staging paths,
 * taken-over mount points) and the port it keeps. {@link #ensure}, {@link #takeOver} and {@link
 * #release} are what NodeStage, the takeover and NodeUnstage come to through {@link
 * ProxySupervisor}; the records in the state dir and the port accounting are kept here. It is also
 * the {@link ProxyContext.Fleet} that adoption fills and the reconciler walks. One lock, this
 * object's, keeps the key, port and user tables consistent between those calls; a proxy's own
 * lifecycle is its {@link Supervised}'s, never decided here.
 */
final class LeaseTable implements ProxyContext.Fleet {

  private static final Logger LOG = LoggerFactory.getLogger(LeaseTable.class);

  private final ProxyContext context;
  private final StateStore store;
  private final PortAllocator ports;
  private final MountPresence presence;
  private final MountTable mountTable;
  private final Map<String, Supervised> byKey = new LinkedHashMap<>();

  LeaseTable(
      ProxyContext context,
      StateStore store,
      PortAllocator ports,
      MountPresence presence,
      MountTable mountTable) {
    this.context = context;
    this.store = store;
    this.ports = ports;
    this.presence = presence;
    this.mountTable = mountTable;
  }

  /** Adopts every proxy in the state dir and repairs what a plugin killed mid-call left. */
  void adopt() throws IOException {
    new Adoption(context, store, ports, presence, byKey, this, this).run();
  }

  synchronized int size() {
    return byKey.size();
  }

  @Override
  public synchronized List<Supervised> all() {
    return new ArrayList<>(byKey.values());
  }

  void writeRecord(ProxyRecord r) throws IOException {
    store.write(r);
    context.stats().stateWrites.incrementAndGet();
  }

  /** {@link ProxySupervisor#ensure}. */
  Lease ensure(String key, ProxySpec spec, String user) throws IOException {
    Supervised s;
    boolean fresh = false;
    synchronized (this) {
      s = byKey.get(key);
      if (s == null) {
        s = register(key, ports.allocate(mountedPorts()), spec, Set.of(user));
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

  /** {@link ProxySupervisor#takeOver}. */
  Lease takeOver(String key, int port, ProxySpec spec, Set<String> users) throws IOException {
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
    context.stats().takeovers.incrementAndGet();
    LOG.info("took over 127.0.0.1:{} for {} (key {})", port, users, key);
    return new Lease(key, port);
  }

  private Supervised register(String key, int port, ProxySpec spec, Set<String> users)
      throws IOException {
    String id = "proxy-" + port;
    Map<String, String> cfg = spec.config(port, store.dir().resolve(id + ".sock")).toMap();
    ProxyRecord r =
        new ProxyRecord(id, key, port, 0, 0, "", cfg, users, 0, context.clock().millis());
    try {
      writeRecord(r);
    } catch (IOException e) {
      ports.release(port);
      throw e;
    }
    presence.watch(port);
    Supervised s = new Supervised(context, r, context.placer().existing("none:"));
    byKey.put(key, s);
    LOG.info("proxy for key {} gets port {}", key, port);
    return s;
  }

  private Lease awaitExisting(Supervised s) throws IOException {
    if (s.state() == ProxyStatus.State.DOWN) {
      s.restartNow("wanted again");
    }
    long deadline = System.nanoTime() + context.config().startTimeout().toNanos();
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

  /** {@link ProxySupervisor#release}. */
  void release(String key, String user) throws IOException {
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

  /** {@link #release} for whichever proxy lists {@code user}. */
  void releaseUser(String user) throws IOException {
    for (Supervised s : all()) {
      if (s.record().users().contains(user)) {
        release(s.record().key(), user);
      }
    }
  }

  /** The lease a user holds, if any. */
  Optional<Lease> leaseOf(String user) {
    return all().stream()
        .filter(s -> s.record().users().contains(user))
        .findFirst()
        .map(s -> new Lease(s.record().key(), s.port()));
  }

  /** Whether a proxy of ours holds the port (its own or a taken-over one). */
  boolean holds(int port) {
    return ports.isHeld(port);
  }

  /**
   * Stops and forgets a proxy; its port is released (callers know no mount carries it). Its group
   * and files go before its record: a plugin killed in between leaves a record, whose release the
   * next start finishes ({@link Adoption}), never a group or file no record names.
   */
  @Override
  public void forget(Supervised s) {
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
  @Override
  public Set<Integer> mountedPorts() throws IOException {
    List<MountInfo> table = mountTable.read();
    return MountPresence.byPort(table).keySet();
  }

  /** The port range counted by the allocator's own rules (a fresh mount table read). */
  PortUse portUse() {
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
  synchronized Optional<ProxyStatus> status(String key) {
    return Optional.ofNullable(byKey.get(key)).map(Supervised::status);
  }
}

package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.health.TargetProbe;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.process.ProxyLauncher;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the supervisor's parts (each {@link Supervised} proxy, its {@link ProxyHealth}, {@link
 * Adoption}, the {@link Reconciler}) are given: the supervisor's settings and adapters, and the two
 * narrow ways back ({@link Owner}, {@link Fleet}) instead of the supervisor itself, so that arrows
 * inside the module run one way (the supervisor builds its parts; no part reaches its builder).
 *
 * @param config the supervisor's settings
 * @param proxiesDir where each proxy's record, config, socket and log live
 * @param placer places a proxy in its cgroup
 * @param launcher starts a proxy process
 * @param processes liveness and signals by pid and start time
 * @param clock the supervisor's clock
 * @param listener told of restarts, crash loops, OOM kills and orphan unmounts
 * @param scheduler the supervisor's timer (restarts with backoff, health rounds)
 * @param stats the supervisor's counters
 * @param probe the supervisor's own look at a mount target
 * @param owner what a proxy tells the supervisor
 */
record ProxyContext(
    SupervisorConfig config,
    Path proxiesDir,
    CgroupPlacer placer,
    ProxyLauncher launcher,
    ProcessTable processes,
    Clock clock,
    ProxySupervisor.Listener listener,
    ScheduledExecutorService scheduler,
    SupervisorStats stats,
    TargetProbe probe,
    Owner owner) {

  /** What one proxy tells the supervisor that owns it. */
  interface Owner {

    /** Writes the proxy's state record (atomically). */
    void writeRecord(ProxyRecord r) throws IOException;

    /** Asks for a reconciler pass soon (a proxy nobody wants has exited). */
    void reconcileSoon();

    /** Runs a restart on a thread of its own unless the supervisor is closed. */
    void runRestart(Runnable restart);

    /** Whether the supervisor is closed (its proxies' exits are then the next one's to see). */
    boolean closed();
  }

  /** The supervisor's proxies, as adoption and the reconciler see them. */
  interface Fleet {

    /** Every proxy, in a snapshot. */
    List<Supervised> all();

    /** Stops watching a proxy and forgets it: its port, record and files go. */
    void forget(Supervised s);

    /** The loopback ports the mount table carries now. */
    Set<Integer> mountedPorts() throws IOException;
  }
}

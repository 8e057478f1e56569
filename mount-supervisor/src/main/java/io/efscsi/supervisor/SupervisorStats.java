package io.efscsi.supervisor;

import java.util.concurrent.atomic.AtomicLong;

/** Counters the node exposes as metrics. */
public final class SupervisorStats {
  public final AtomicLong launches = new AtomicLong();
  public final AtomicLong restarts = new AtomicLong();
  public final AtomicLong oomKills = new AtomicLong();
  public final AtomicLong bindFailures = new AtomicLong();
  public final AtomicLong adopted = new AtomicLong();
  public final AtomicLong adoptionRestarts = new AtomicLong();
  public final AtomicLong healthRestarts = new AtomicLong();

  /**
   * Health rounds that found a proxy slow, not hung: a restart was due, the process was working.
   */
  public final AtomicLong slowRounds = new AtomicLong();

  /** Times a proxy's mount target became unreachable (the proxy was left up). */
  public final AtomicLong targetOutages = new AtomicLong();

  public final AtomicLong orphanUnmounts = new AtomicLong();
  public final AtomicLong takeovers = new AtomicLong();
  public final AtomicLong stopped = new AtomicLong();
  public final AtomicLong reconcilePasses = new AtomicLong();
  public final AtomicLong reconcileFailures = new AtomicLong();
  public final AtomicLong lastReconcileNanos = new AtomicLong();
  public final AtomicLong stateWrites = new AtomicLong();

  /** Proxies running another build than the plugin's (rolling upgrades). */
  public final AtomicLong staleProxies = new AtomicLong();

  public final AtomicLong proxyMoves = new AtomicLong();
  public final AtomicLong proxyMoveFailures = new AtomicLong();

  /** Moves not tried: the proxy's listening socket could not be taken, or its port refused. */
  public final AtomicLong proxyMoveSkips = new AtomicLong();

  /** How long the last move took. */
  public final AtomicLong lastMoveMillis = new AtomicLong();
}

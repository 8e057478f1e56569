package io.efscsi.node.takeover;

import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.supervisor.ProxySpec;
import io.efscsi.supervisor.ProxyStartException;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.MountTable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes over the Go driver's mounts: each pass finds them ({@link Discovery}), plans our proxy
 * ({@link TakeoverPlanner}), prepares its client certificate and has the supervisor start it on the
 * mount's port, with the mount points as its users. From then on the proxy is the supervisor's like
 * any other; {@link #unpublished} lets it go when NodeUnpublish removed the pod's mount.
 */
public final class Takeover {

  private static final Logger LOG = LoggerFactory.getLogger(Takeover.class);

  /** What one pass did. */
  public record Report(int takenOver, int waiting, int refused, int plain) {}

  private final EfsUtilsDirs dirs;
  private final MountTable table;
  private final IntPredicate listening;
  private final TakeoverCertificates certificates;
  private final TakeoverEvents events;
  private final Clock clock;
  private final Discovery discovery;
  private final TakeoverPlanner planner;
  private final Map<Integer, String> reported = new HashMap<>();
  private final Set<String> plainSeen = new HashSet<>();
  private final Set<Integer> resumed = new HashSet<>();

  public Takeover(
      TakeoverOptions options,
      MountTable table,
      IntPredicate listening,
      TakeoverCertificates certificates,
      TakeoverEvents events,
      Clock clock) {
    this.dirs = options.dirs();
    this.table = table;
    this.listening = listening;
    this.certificates = certificates;
    this.events = events;
    this.clock = clock;
    this.discovery = new Discovery(options.quiet());
    this.planner = new TakeoverPlanner(dirs);
  }

  /** One pass: finds the mounts nobody serves and takes over those that can be. */
  public synchronized Report pass(ProxySupervisor sup) throws IOException {
    List<EfsUtilsDirs.Stored> stored = dirs.list();
    resumeRenewals(sup, stored);
    List<Discovery.Finding> found =
        discovery.scan(table.read(), ports(sup), stored, listening, clock.instant());
    int taken = 0;
    int waiting = 0;
    int refused = 0;
    int plain = 0;
    Set<Integer> seen = new HashSet<>();
    for (Discovery.Finding f : found) {
      seen.add(f.port());
      switch (f) {
        case Discovery.Waiting w -> {
          waiting++;
          LOG.debug("port {} is not ours to take yet: {}", w.port(), w.why());
        }
        case Discovery.Refused r -> {
          refused++;
          report(r.port(), r.mountPoints(), r.reason());
        }
        case Discovery.Plain p -> {
          plain++;
          if (plainSeen.add(p.mountPoint())) {
            LOG.info(
                "{} is mounted straight from {} without a proxy: nothing to take over",
                LoggingTakeoverEvents.describe(p.mountPoint()),
                p.source());
          }
        }
        case Discovery.Candidate c -> {
          if (take(sup, c)) {
            taken++;
          } else {
            refused++;
          }
        }
      }
    }
    reported.keySet().retainAll(seen);
    return new Report(taken, waiting, refused, plain);
  }

  private boolean take(ProxySupervisor sup, Discovery.Candidate c) {
    long t0 = System.nanoTime();
    TakeoverPlan plan;
    try {
      plan = planner.plan(c.state(), c.mountPoints());
    } catch (UnusableStateException e) {
      report(c.port(), c.mountPoints(), e.getMessage());
      return false;
    }
    ProxySpec spec = plan.proxy();
    String certificate = "no client certificate";
    try {
      if (plan.certificate().isPresent()) {
        ClientCertificateSource.Files files = certificates.prepare(plan, plan.certificate().get());
        spec = spec.withClientCertificate(files.certificate(), files.privateKey());
        certificate = "client certificate " + files.certificate();
      }
      sup.takeOver(plan.key(), plan.port(), spec, Set.copyOf(plan.users()));
    } catch (IOException | RuntimeException e) {
      certificates.forget(plan.port());
      if (e instanceof ProxyStartException p
          && p.reason() == ProxyStartException.Reason.BIND_FAILED) {
        LOG.warn("port {} got a listener while being taken over: {}", plan.port(), e.getMessage());
        return false;
      }
      report(c.port(), c.mountPoints(), "our proxy could not take the port: " + e.getMessage());
      return false;
    }
    reported.remove(plan.port());
    resumed.add(plan.port());
    events.tookOver(plan, certificate + ", in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    return true;
  }

  /** Certificates of taken-over proxies adopted after a restart are renewed again. */
  private void resumeRenewals(ProxySupervisor sup, List<EfsUtilsDirs.Stored> stored) {
    for (var status : sup.status()) {
      if (!status.key().startsWith(TakeoverPlanner.KEY_PREFIX) || !resumed.add(status.port())) {
        continue;
      }
      String stem = status.key().substring(TakeoverPlanner.KEY_PREFIX.length());
      for (EfsUtilsDirs.Stored s : stored) {
        if (s.stem().equals(stem) && s.config().isPresent()) {
          try {
            EfsUtilsState state = EfsUtilsStateParser.parse(stem, s.state(), s.config().get());
            TakeoverPlan plan = planner.plan(state, List.of(state.mountPoint()));
            plan.certificate().ifPresent(c -> certificates.resume(plan, c));
          } catch (UnusableStateException e) {
            LOG.warn("cannot renew the certificate of port {}: {}", status.port(), e.getMessage());
          }
        }
      }
    }
    Set<Integer> live = new HashSet<>();
    sup.status().forEach(st -> live.add(st.port()));
    for (int gone : Set.copyOf(resumed)) {
      if (!live.contains(gone)) { // the reconciler stopped it (its mount went away)
        resumed.remove(gone);
        certificates.forget(gone);
      }
    }
  }

  private void report(int port, List<String> mountPoints, String reason) {
    if (!reason.equals(reported.put(port, reason))) {
      events.refused(port, mountPoints, reason);
    }
  }

  private static Set<Integer> ports(ProxySupervisor sup) {
    Set<Integer> held = new HashSet<>();
    sup.status().forEach(s -> held.add(s.port()));
    return held;
  }

  /**
   * Whether a proxy that took over the Go driver's mount serves file system {@code fileSystemId} at
   * {@code target} (kubelet may publish a volume again after its own restart: that target is
   * already published).
   */
  public static boolean serves(ProxySupervisor sup, String fileSystemId, Path target) {
    return sup.leaseOf(target.normalize().toString())
        .filter(l -> l.key().startsWith(TakeoverPlanner.KEY_PREFIX + fileSystemId + "."))
        .isPresent();
  }

  /**
   * NodeUnpublish removed {@code target}: a taken-over proxy serving it loses that user, and goes
   * (with its certificate) once nobody uses it and no mount carries its port.
   */
  public void unpublished(ProxySupervisor sup, Path target) throws IOException {
    String user = target.normalize().toString();
    Optional<ProxySupervisor.Lease> lease = sup.leaseOf(user);
    if (lease.isEmpty() || !lease.get().key().startsWith(TakeoverPlanner.KEY_PREFIX)) {
      return;
    }
    sup.releaseUser(user);
    if (sup.status(lease.get().key()).isEmpty()) {
      certificates.forget(lease.get().port());
      LOG.info("taken-over proxy on 127.0.0.1:{} released after NodeUnpublish", lease.get().port());
    }
  }
}

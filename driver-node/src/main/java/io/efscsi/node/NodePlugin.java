package io.efscsi.node;

import io.efscsi.common.Plugin;
import io.efscsi.common.identity.IdentityService.Capability;
import io.efscsi.common.identity.Readiness;
import io.efscsi.supervisor.PortAllocator;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.cgroup.CgroupDetector;
import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.mounts.CommandUnmounter;
import io.efscsi.supervisor.mounts.ProcMountTable;
import io.efscsi.supervisor.process.JavaProxyLauncher;
import io.efscsi.supervisor.process.ProcProcessTable;
import io.grpc.BindableService;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node side. Ready when its state directory is writable and the proxy supervisor has adopted
 * the proxies of the state dir. A sick proxy never makes the node unready (Probe is about the
 * plugin, never one volume: a failing Probe restarts the plugin, which helps no volume); it shows
 * in metrics, logs and, with the Node service, VOLUME_CONDITION. (The Node service joins here with
 * its issue.)
 */
public final class NodePlugin implements Plugin {

  private static final Logger LOG = LoggerFactory.getLogger(NodePlugin.class);

  private final NodeOptions options;
  private static final Duration RETRY = Duration.ofSeconds(2);

  private volatile ProxySupervisor supervisor;
  private volatile boolean closed;
  private volatile MeterRegistry registry;
  private Thread starter;

  public NodePlugin(NodeOptions options) {
    this.options = options;
  }

  @Override
  public String name() {
    return "node";
  }

  @Override
  public List<BindableService> services() {
    return List.of();
  }

  @Override
  public Set<Capability> capabilities() {
    return Set.of(Capability.VOLUME_ACCESSIBILITY_CONSTRAINTS);
  }

  @Override
  public void bindMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void start(Readiness readiness) {
    readiness.add(new StateDirCheck(options.stateDir()));
    Readiness.Gate gate = readiness.gate("proxy supervisor", "proxy supervisor not started yet");
    starter = Thread.ofVirtual().name("supervisor-start").start(() -> startSupervisor(gate));
  }

  /** Starts the supervisor, retrying every few seconds while the state dir is not usable. */
  private void startSupervisor(Readiness.Gate gate) {
    String lastReason = null;
    while (!closed) {
      try {
        ProxySupervisor s = newSupervisor(options.supervisor());
        s.start();
        MeterRegistry r = registry;
        if (r != null) {
          SupervisorMetrics.bind(s, r);
        }
        supervisor = s;
        gate.open();
        return;
      } catch (Exception e) {
        String reason = "proxy supervisor cannot start: " + e.getMessage();
        if (!reason.equals(lastReason)) {
          LOG.error("{} (retrying every {} s)", reason, RETRY.toSeconds());
          lastReason = reason;
        }
        gate.fail(reason);
      }
      try {
        Thread.sleep(RETRY);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** The real adapters; only here. */
  static ProxySupervisor newSupervisor(SupervisorOptions o) throws java.io.IOException {
    CgroupPlacer placer =
        CgroupDetector.choose(
            o.cgroupMode(),
            o.cgroupRoot(),
            o.cgroupParent(),
            "systemd-run",
            Path.of("/run/systemd/system"));
    return new ProxySupervisor(
        o.config(),
        placer,
        new JavaProxyLauncher(JavaProxyLauncher.currentJava(), home(), "setsid"),
        new ProcProcessTable(),
        new ProcMountTable(ProcMountTable.SELF),
        new CommandUnmounter("umount", Duration.ofSeconds(10)),
        PortAllocator::loopbackBindable,
        Clock.systemUTC(),
        new ProxySupervisor.Listener() {});
  }

  /** The distribution root: {@code efscsi.home} (set by bin/efs-csi), else from our jar's place. */
  static Path home() throws java.io.IOException {
    String prop = System.getProperty("efscsi.home");
    if (prop != null && !prop.isBlank()) {
      return Path.of(prop);
    }
    try {
      Path jar =
          Path.of(NodePlugin.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (jar.getParent() != null && jar.getParent().getFileName().toString().equals("lib")) {
        return jar.getParent().getParent();
      }
    } catch (java.net.URISyntaxException | SecurityException e) {
      // fall through
    }
    throw new java.io.IOException(
        "cannot find the distribution (lib/proxy): set -Defscsi.home or run bin/efs-csi");
  }

  /** The supervisor once started (the Node service's way to proxies). */
  public Optional<ProxySupervisor> supervisor() {
    return Optional.ofNullable(supervisor);
  }

  @Override
  public void close() {
    closed = true;
    if (starter != null) {
      starter.interrupt();
    }
    ProxySupervisor s = supervisor;
    if (s != null) {
      s.close(); // proxies keep running: the next plugin adopts them
    }
  }
}

package io.efscsi.node;

import io.efscsi.common.Plugin;
import io.efscsi.common.error.DriverException;
import io.efscsi.common.identity.IdentityService.Capability;
import io.efscsi.common.identity.Readiness;
import io.efscsi.node.cloud.NodeMetadata;
import io.efscsi.node.events.PodEvents;
import io.efscsi.node.events.ProxyEvents;
import io.efscsi.node.events.PublishedPods;
import io.efscsi.node.takeover.Takeover;
import io.efscsi.node.volume.AwsMountTargetLookup;
import io.efscsi.node.volume.InetAddressHostResolver;
import io.efscsi.node.volume.MountPlanner;
import io.efscsi.node.volume.MountTargetResolver;
import io.efscsi.node.volume.OptionFiles;
import io.efscsi.node.volume.VolumeHandle;
import io.efscsi.supervisor.PortAllocator;
import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.Supervisors;
import io.efscsi.supervisor.host.CommandMounter;
import io.efscsi.supervisor.host.MountPoints;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.Mounter;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.host.Unmounter;
import io.grpc.BindableService;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node side. Ready when its state directory is writable and the proxy supervisor has adopted
 * the proxies of the state dir. A sick proxy never makes the node unready (Probe is about the
 * plugin, never one volume: a failing Probe restarts the plugin, which helps no volume); it shows
 * in metrics, logs and the Node service's VOLUME_CONDITION.
 */
public final class NodePlugin implements Plugin {

  private static final Logger LOG = LoggerFactory.getLogger(NodePlugin.class);

  private static final Duration MOUNT_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration UNMOUNT_WAIT = Duration.ofSeconds(10);
  private static final Duration STATFS_TIMEOUT = Duration.ofSeconds(5);

  private final NodeOptions options;
  private final NodeService service;
  private final AwsMountTargetLookup lookup;
  private final NodeCloud cloud;
  private final Mounter mounter;
  private final MountTable mountTable = new ProcMountTable(ProcMountTable.SELF);
  private static final Duration RETRY = Duration.ofSeconds(2);

  private volatile ProxySupervisor supervisor;
  private volatile Takeover takeover;
  private volatile boolean closed;
  private volatile MeterRegistry registry;
  private Thread starter;
  private volatile ScheduledExecutorService takeoverTimer;
  private volatile AutoCloseable volumeMetrics;
  private volatile ProxyEvents proxyEventsSender;

  public NodePlugin(NodeOptions options, Map<String, String> env) {
    this.options = options;
    this.lookup = new AwsMountTargetLookup();
    PublishedPods publishedPods = new PublishedPods();
    this.cloud = new NodeCloud(env, publishedPods);
    NodeMetadata metadata = cloud.metadata();
    MountPlanner planner =
        new MountPlanner(
            options.mountDefaults(),
            metadata,
            new MountTargetResolver(
                new InetAddressHostResolver(InetAddressHostResolver.DEFAULT_TIMEOUT), lookup),
            options.mountTargetPort());
    Supplier<ProxySupervisor> supervisors =
        () ->
            supervisor()
                .orElseThrow(() ->
                    DriverException.unavailable(
                        "the node plugin is starting: its proxy supervisor has not adopted"
                            + " the state dir yet"));
    MountPoints mounts = new MountPoints(mountTable);
    this.mounter =
        new CommandMounter(options.nfsMountCommand(), MOUNT_TIMEOUT, options.unmountTimeout());
    StagingMounts staging =
        new StagingMounts(supervisors, mounter, mounts, cloud.certificates(), UNMOUNT_WAIT);
    cloud
        .events()
        .ifPresent(e ->
            staging.onStageFailure((volumeId, why) ->
                Thread.ofVirtual()
                    .start(() ->
                        e.recordOnVolumeHandle(
                            volumeId, PodEvents.Type.Warning, "StageFailed", why))));
    this.service =
        new NodeService(
            (id, ctx, flags, ro) -> OptionFiles.check(planner.plan(id, ctx, flags, ro)),
            new PathConfinement(options.kubeletRootDir(), mounts),
            staging,
            new PublishMounts(mounter, mounts, UNMOUNT_WAIT, this::unpublished, this::takenOver),
            new VolumeHealth(
                mounts,
                supervisors,
                new VolumeStats(STATFS_TIMEOUT),
                options.volMetricsOptIn()
                    ? Optional.of(
                        new UsageWalks(
                            options.volMetricsRefreshPeriod(),
                            options.volMetricsFsRateLimit(),
                            Duration.ofMinutes(30),
                            java.time.Clock.systemUTC()))
                    : Optional.empty()),
            publishedPods,
            metadata,
            options.maxInflightMountCalls(),
            options.volumeAttachLimit(),
            options.volMetricsOptIn());
  }

  @Override
  public String name() {
    return "node";
  }

  @Override
  public List<BindableService> services() {
    return List.of(service);
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
    Readiness.Gate metadata = readiness.gate("node metadata", "node metadata not resolved yet");
    Readiness.Gate gate = readiness.gate("proxy supervisor", "proxy supervisor not started yet");
    starter =
        Thread.ofVirtual()
            .name("node-start")
            .start(() -> {
              if (resolveMetadata(metadata)) {
                cloud.startTaintRemover();
                startSupervisor(gate);
              }
            });
  }

  /** Resolves the node metadata, retrying while no source answers; false when closed first. */
  private boolean resolveMetadata(Readiness.Gate gate) {
    String lastReason = null;
    while (!closed) {
      try {
        cloud.resolveMetadata();
        gate.open();
        return true;
      } catch (RuntimeException e) {
        String reason = e.getMessage();
        if (!reason.equals(lastReason)) {
          LOG.error("{} (retrying every {} s)", reason, RETRY.toSeconds());
          lastReason = reason;
        }
        gate.fail(reason);
      }
      try {
        Thread.sleep(RETRY);
      } catch (InterruptedException e) {
        return false;
      }
    }
    return false;
  }

  /** Starts the supervisor, retrying every few seconds while the state dir is not usable. */
  private void startSupervisor(Readiness.Gate gate) {
    String lastReason = null;
    while (!closed) {
      try {
        ProxySupervisor s = newSupervisor(options.supervisor(), mounter, proxyEvents());
        s.start();
        MeterRegistry r = registry;
        if (r != null) {
          volumeMetrics = SupervisorMetrics.bind(s, mountTable, r);
        }
        supervisor = s;
        try {
          cloud.resumeRenewals(
              s.certificateDir(), s.status().stream().map(ProxyStatus::key).toList());
        } catch (RuntimeException e) {
          LOG.error(
              "cannot renew the adopted proxies' client certificates again: {}", e.toString());
        }
        if (options.takeover().enabled()) {
          startTakeover(s);
        }
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

  /**
   * Takes over the Go driver's mounts now and at every reconcile interval (docs/migration.md). The
   * first pass runs before the node reports ready, so the pods' I/O waits no longer than it must.
   */
  private void startTakeover(ProxySupervisor s) {
    Takeover t =
        new Takeover(
            options.takeover(),
            mountTable,
            port -> !PortAllocator.loopbackBindable(port),
            cloud.takeoverCertificates(s::certificateDir),
            cloud.takeoverEvents(),
            Clock.systemUTC());
    takeover = t;
    Runnable pass =
        () -> {
          try {
            t.pass(s);
          } catch (java.io.IOException | RuntimeException e) {
            LOG.error("takeover pass failed (nothing was changed): {}", e.toString());
          }
        };
    pass.run();
    long every = options.supervisor().config().reconcileInterval().toMillis();
    takeoverTimer =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("takeover").daemon().factory());
    takeoverTimer.scheduleWithFixedDelay(pass, every, every, TimeUnit.MILLISECONDS);
  }

  /** Whether a taken-over proxy serves this volume's file system at {@code target}. */
  private boolean takenOver(String volumeId, Path target) {
    ProxySupervisor s = supervisor;
    if (takeover == null || s == null) {
      return false;
    }
    try {
      return Takeover.serves(s, VolumeHandle.parse(volumeId).fileSystemId(), target);
    } catch (DriverException e) {
      return false; // not a volume id of ours: nothing taken over for it
    }
  }

  /** NodeUnpublish removed a target: a taken-over proxy serving it may go. */
  private void unpublished(Path target) throws java.io.IOException {
    Takeover t = takeover;
    ProxySupervisor s = supervisor;
    if (t != null && s != null) {
      t.unpublished(s, target);
    }
  }

  /** Events about proxies on the pods they serve and on the Node, when in a cluster. */
  private ProxySupervisor.Listener proxyEvents() {
    Optional<PodEvents> e = cloud.events();
    if (proxyEventsSender != null) {
      return proxyEventsSender;
    }
    if (e.isEmpty()) {
      return new ProxySupervisor.Listener() {};
    }
    ProxyEvents p = new ProxyEvents(e.get(), mountTable);
    proxyEventsSender = p;
    return p;
  }

  /** The supervisor on this host's real adapters; only here. */
  static ProxySupervisor newSupervisor(
      SupervisorOptions o, Unmounter unmounter, ProxySupervisor.Listener listener)
      throws java.io.IOException {
    return Supervisors.onThisHost(o.config(), o.cgroups(), home(), unmounter, listener);
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
    lookup.close();
    cloud.close();
    if (starter != null) {
      starter.interrupt();
    }
    AutoCloseable metrics = volumeMetrics;
    if (metrics != null) {
      try {
        metrics.close();
      } catch (Exception e) {
        LOG.debug("volume metrics did not stop: {}", e.toString());
      }
    }
    ProxyEvents sender = proxyEventsSender;
    if (sender != null) {
      sender.close();
    }
    ScheduledExecutorService timer = takeoverTimer;
    if (timer != null) {
      timer.shutdownNow();
    }
    ProxySupervisor s = supervisor;
    if (s != null) {
      s.close(); // proxies keep running: the next plugin adopts them
    }
  }
}

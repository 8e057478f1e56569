package io.efscsi.node;

import io.efscsi.common.Plugin;
import io.efscsi.common.error.DriverException;
import io.efscsi.common.identity.IdentityService.Capability;
import io.efscsi.common.identity.Readiness;
import io.efscsi.node.cleanup.DirectoryCleanup;
import io.efscsi.node.cloud.DeferredNodeMetadata;
import io.efscsi.node.cloud.NodeMetadataChain;
import io.efscsi.node.events.KubernetesEventApi;
import io.efscsi.node.events.PodEvents;
import io.efscsi.node.events.ProxyEvents;
import io.efscsi.node.events.PublishedPods;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.NodeCertificates;
import io.efscsi.node.k8s.InClusterClient;
import io.efscsi.node.k8s.NotReadyTaintRemover;
import io.efscsi.node.metrics.SupervisorMetrics;
import io.efscsi.node.mounts.PublishMounts;
import io.efscsi.node.mounts.StagingMounts;
import io.efscsi.node.paths.PathConfinement;
import io.efscsi.node.paths.StateDirCheck;
import io.efscsi.node.stats.UsageWalks;
import io.efscsi.node.stats.VolumeHealth;
import io.efscsi.node.stats.VolumeStats;
import io.efscsi.node.takeover.AdoptedCertificates;
import io.efscsi.node.takeover.PodTakeoverEvents;
import io.efscsi.node.takeover.Takeover;
import io.efscsi.node.takeover.TakeoverEvents;
import io.efscsi.node.volume.AwsMountTargetLookup;
import io.efscsi.node.volume.MountPlanner;
import io.efscsi.node.volume.MountTargetResolver;
import io.efscsi.node.volume.OptionFiles;
import io.efscsi.node.volume.VolumeHandle;
import io.efscsi.supervisor.PortAllocator;
import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.MountPoints;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.Mounter;
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
 * in metrics, logs and the Node service's VOLUME_CONDITION. Ready also waits for the first takeover
 * pass, so that the chart's readiness probe paces a node roll.
 *
 * <p>Just over 400 lines because it is the node's composition root: it builds the object graph from
 * the options ({@link HostAdapters} makes the real adapters) and runs the start sequence (metadata,
 * supervisor, takeover) that decides readiness; the parts it wires live in packages of their own.
 */
public final class NodePlugin implements Plugin {

  private static final Logger LOG = LoggerFactory.getLogger(NodePlugin.class);

  private static final Duration UNMOUNT_WAIT = Duration.ofSeconds(10);
  private static final Duration STATFS_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration RETRY = Duration.ofSeconds(2);

  /** What a supervisor without events is told (outside a cluster; the cleanup mounts'). */
  private static final ProxySupervisor.Listener NO_LISTENER = new ProxySupervisor.Listener() {};

  private final NodeOptions options;
  private final Map<String, String> env;
  private final Clock clock = Clock.systemUTC();
  private final MountTable mountTable = HostAdapters.mountTable();
  private final Mounter mounter;
  private final AwsMountTargetLookup lookup = HostAdapters.mountTargetLookup();
  private final InClusterClient kubernetes;
  private final DeferredNodeMetadata metadata;
  private final NodeCertificates certificates;
  private final Optional<PodEvents> events;
  private final Optional<ProxyEvents> proxyEvents;
  private final NodeService service;

  private volatile ProxySupervisor supervisor;
  private volatile Takeover takeover;
  private volatile boolean closed;
  private volatile MeterRegistry registry;
  private Thread starter;
  private volatile NotReadyTaintRemover taint;
  private volatile ScheduledExecutorService takeoverTimer;

  /** Posts the events the API server could not take when they happened ({@link PodEvents}). */
  private volatile ScheduledExecutorService eventRetry;

  /** How often events that wait for the API server are tried again. */
  private static final Duration EVENT_RETRY = Duration.ofSeconds(5);

  private volatile AutoCloseable volumeMetrics;

  /**
   * The node's object graph, on this host's real adapters ({@link HostAdapters}), each made once
   * here and passed to the parts that use it; the supervisor is made at start.
   */
  public NodePlugin(NodeOptions options, Map<String, String> env) {
    this.options = options;
    this.env = env;
    this.mounter = HostAdapters.mounter(options);
    this.kubernetes = HostAdapters.kubernetes(env);
    this.metadata = new DeferredNodeMetadata(NodeMetadataChain.standard(env, kubernetes));
    this.certificates =
        new NodeCertificates(
            () -> metadata.resolve().region(),
            HostAdapters.credentials(),
            clock,
            Optional.of(options.stateDir().resolve(ClientCertificates.NODE_KEY_FILE)));
    PublishedPods publishedPods = new PublishedPods();
    String nodeName = env.getOrDefault("CSI_NODE_NAME", "").strip();
    this.events =
        kubernetes.inCluster() && !nodeName.isEmpty()
            ? Optional.of(
                new PodEvents(new KubernetesEventApi(kubernetes), publishedPods, nodeName, clock))
            : Optional.empty();
    this.proxyEvents = events.map(e -> new ProxyEvents(e, mountTable));
    MountPlanner planner =
        new MountPlanner(
            options.mountDefaults(),
            metadata,
            new MountTargetResolver(HostAdapters.hosts(), lookup),
            options.mountTargetPort());
    Supplier<ProxySupervisor> supervisors =
        () ->
            supervisor()
                .orElseThrow(() ->
                    DriverException.unavailable(
                        "the node plugin is starting: its proxy supervisor has not adopted"
                            + " the state dir yet"));
    MountPoints mounts = new MountPoints(mountTable);
    StagingMounts staging =
        new StagingMounts(supervisors, mounter, mounts, certificates, UNMOUNT_WAIT);
    events.ifPresent(e ->
        staging.onStageFailure((volumeId, why) ->
            Thread.ofVirtual()
                .start(() ->
                    e.recordOnVolumeHandle(volumeId, PodEvents.Type.Warning, "StageFailed", why))));
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
                            clock))
                    : Optional.empty()),
            publishedPods,
            metadata,
            options.maxInflightMountCalls(),
            options.volumeAttachLimit(),
            options.volMetricsOptIn());
  }

  /**
   * The controller's cleanup mounts ({@code --delete-access-point-root-dir}) on this host's real
   * adapters: a mount command and mount table reader of their own, DNS (the mount target's address
   * is given: no AWS lookups), the IAM credentials of each region, and a supervisor on their own
   * state dir ({@code <state-dir>/controller}), so that in the one-process {@code all} mode it
   * never touches the node's proxies. The launcher makes it (the controller side uses it).
   */
  public static DirectoryCleanup directoryCleanup(NodeOptions options) {
    Path stateDir = options.stateDir().resolve("controller");
    Mounter mounter = HostAdapters.mounter(options);
    SupervisorOptions o = options.supervisor();
    SupervisorOptions own =
        new SupervisorOptions(
            o.config().withStateDir(stateDir), o.cgroupMode(), o.cgroupRoot(), o.cgroupParent());
    return new DirectoryCleanup(
        stateDir,
        options.mountDefaults(),
        options.mountTargetPort(),
        mounter,
        new MountPoints(HostAdapters.mountTable()),
        HostAdapters.hosts(),
        HostAdapters.credentials(),
        () -> HostAdapters.supervisor(own, mounter, NO_LISTENER));
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
    events.ifPresent(e -> {
      ScheduledExecutorService retry =
          Executors.newSingleThreadScheduledExecutor(
              Thread.ofPlatform().name("event-retry").daemon().factory());
      retry.scheduleWithFixedDelay(
          () -> {
            try {
              e.flush();
            } catch (RuntimeException x) {
              LOG.debug("event retry: {}", x.toString());
            }
          },
          EVENT_RETRY.toMillis(),
          EVENT_RETRY.toMillis(),
          TimeUnit.MILLISECONDS);
      eventRetry = retry;
    });
    Readiness.Gate known = readiness.gate("node metadata", "node metadata not resolved yet");
    Readiness.Gate gate = readiness.gate("proxy supervisor", "proxy supervisor not started yet");
    starter =
        Thread.ofVirtual()
            .name("node-start")
            .start(() -> {
              if (resolveMetadata(known)) {
                startTaintRemover();
                startSupervisor(gate);
              }
            });
  }

  /** Starts removing the agent-not-ready taint once the kubelet registered the driver. */
  private void startTaintRemover() {
    if (!kubernetes.inCluster()) {
      return;
    }
    NotReadyTaintRemover.nodeToWatch(env)
        .ifPresent(node -> {
          NotReadyTaintRemover t =
              new NotReadyTaintRemover(
                  kubernetes.get(), node, NotReadyTaintRemover.Backoff.DEFAULT);
          taint = t;
          t.start();
        });
  }

  /** Resolves the node metadata, retrying while no source answers; false when closed first. */
  private boolean resolveMetadata(Readiness.Gate gate) {
    String lastReason = null;
    while (!closed) {
      try {
        metadata.resolve();
        certificates.prepare();
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
        ProxySupervisor s =
            HostAdapters.supervisor(
                options.supervisor(),
                mounter,
                proxyEvents.<ProxySupervisor.Listener>map(p -> p).orElse(NO_LISTENER));
        s.start();
        MeterRegistry r = registry;
        if (r != null) {
          volumeMetrics = SupervisorMetrics.bind(s, mountTable, r);
        }
        supervisor = s;
        try {
          certificates.resumeRenewals(
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
            new AdoptedCertificates(
                certificates.adoption(), Optional.of(certificates.renewer()), s::certificateDir),
            events.<TakeoverEvents>map(PodTakeoverEvents::new).orElse(TakeoverEvents.LOG),
            clock);
    takeover = t;
    Runnable pass =
        () -> {
          try {
            t.pass(s);
          } catch (java.io.IOException | RuntimeException e) {
            LOG.error("takeover pass failed (nothing was changed): {}", e.toString());
          }
        };
    try {
      Takeover.Report r = t.pass(s);
      LOG.info(
          "first takeover pass done: {} taken over, {} waiting, {} refused, {} plain; the node"
              + " reports ready",
          r.takenOver(),
          r.waiting(),
          r.refused(),
          r.plain());
    } catch (java.io.IOException | RuntimeException e) {
      LOG.error(
          "first takeover pass failed (nothing was changed; the node reports ready, the next pass"
              + " tries again): {}",
          e.toString());
    }
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

  /** The supervisor once started (the Node service's way to proxies). */
  public Optional<ProxySupervisor> supervisor() {
    return Optional.ofNullable(supervisor);
  }

  @Override
  public void close() {
    closed = true;
    lookup.close();
    NotReadyTaintRemover t = taint;
    if (t != null) {
      t.close();
    }
    certificates.close();
    kubernetes.close();
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
    proxyEvents.ifPresent(ProxyEvents::close);
    ScheduledExecutorService retry = eventRetry;
    if (retry != null) {
      retry.shutdownNow();
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

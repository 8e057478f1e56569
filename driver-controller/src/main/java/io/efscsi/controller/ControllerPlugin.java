package io.efscsi.controller;

import io.efscsi.common.Plugin;
import io.efscsi.common.identity.IdentityService.Capability;
import io.efscsi.common.identity.Readiness;
import io.efscsi.controller.cloud.ApiMetrics;
import io.efscsi.controller.cloud.Clouds;
import io.efscsi.controller.k8s.KubernetesFileSystemIds;
import io.efscsi.controller.k8s.NodeRegionLabel;
import io.efscsi.controller.provision.AccessPointProvisioner;
import io.efscsi.controller.provision.DirectoryRemover;
import io.efscsi.controller.provision.Tags;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.BindableService;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.regions.Region;

/**
 * The controller side. It is ready once its cloud clients are built (region found, SDK clients
 * constructed); building retries in the background until it succeeds. Until then CreateVolume and
 * DeleteVolume answer UNAVAILABLE.
 */
public final class ControllerPlugin implements Plugin {

  private static final Logger log = LoggerFactory.getLogger(ControllerPlugin.class);

  private final ControllerOptions options;
  private final RegionResolver regions;
  private final Map<String, String> env;
  private final Duration retryEvery;
  private final KubernetesFileSystemIds fileSystemIds =
      new KubernetesFileSystemIds(() -> new KubernetesClientBuilder().build());
  private final ControllerService service;
  private volatile MeterRegistry registry = Metrics.globalRegistry;
  private volatile Clouds clouds;
  private volatile AccessPointProvisioner provisioner;
  private volatile Thread builder;
  private final Optional<DirectoryRemover> remover;

  public ControllerPlugin(ControllerOptions options, Map<String, String> env) {
    this(options, env, Optional.empty());
  }

  /**
   * @param remover how DeleteVolume removes an access point's root directory with {@code
   *     --delete-access-point-root-dir} (the launcher passes the node's mount path)
   */
  public ControllerPlugin(
      ControllerOptions options, Map<String, String> env, Optional<DirectoryRemover> remover) {
    this(
        options,
        new RegionResolver(
            options.region(),
            env,
            RegionResolver.instanceMetadata(),
            env.containsKey("KUBERNETES_SERVICE_HOST")
                ? new NodeRegionLabel(() -> new KubernetesClientBuilder().build(), env)::region
                : Optional::empty),
        env,
        Duration.ofSeconds(10),
        remover);
  }

  ControllerPlugin(
      ControllerOptions options,
      RegionResolver regions,
      Map<String, String> env,
      Duration retryEvery) {
    this(options, regions, env, retryEvery, Optional.empty());
  }

  ControllerPlugin(
      ControllerOptions options,
      RegionResolver regions,
      Map<String, String> env,
      Duration retryEvery,
      Optional<DirectoryRemover> remover) {
    this.remover = remover;
    this.options = options;
    this.regions = regions;
    this.env = env;
    this.retryEvery = retryEvery;
    this.service = new ControllerService(() -> Optional.ofNullable(provisioner));
  }

  @Override
  public String name() {
    return "controller";
  }

  @Override
  public List<BindableService> services() {
    return List.of(service);
  }

  @Override
  public Set<Capability> capabilities() {
    return Set.of(
        Capability.CONTROLLER_SERVICE,
        Capability.VOLUME_ACCESSIBILITY_CONSTRAINTS,
        Capability.ONLINE_VOLUME_EXPANSION);
  }

  @Override
  public void bindMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void start(Readiness readiness) {
    if (options.deleteAccessPointRootDir() && remover.isEmpty()) {
      throw new IllegalStateException(
          "--delete-access-point-root-dir is set but this controller was built without a way to"
              + " mount file systems");
    }
    if (options.deleteAccessPointRootDir()) {
      log.info(
          "--delete-access-point-root-dir: DeleteVolume removes each access point's root"
              + " directory (through a proxy and an NFS mount of the file system) before the"
              + " access point");
    }
    Tags tags = options.parsedTags();
    tags.skipped().forEach(t -> log.warn("--tags: skipping '{}': expected key:value", t));
    Readiness.Gate gate = readiness.gate("cloud client", "AWS client not built yet");
    builder =
        Thread.ofVirtual()
            .name("cloud-client")
            .start(() -> {
              while (!Thread.currentThread().isInterrupted()) {
                Optional<RegionResolver.Found> found = regions.resolve();
                if (found.isPresent() && fips() && !fipsRegion(found.get().region())) {
                  String why =
                      "AWS_USE_FIPS_ENDPOINT=true but region "
                          + found.get().region()
                          + " has no FIPS endpoints for EFS (only us-* and ca-* regions do)";
                  log.error(why);
                  gate.fail(why);
                  return;
                }
                if (found.isPresent()) {
                  build(found.get(), tags);
                  gate.open();
                  return;
                }
                gate.fail(
                    "cannot determine the AWS region: set --region or AWS_REGION"
                        + " (instance metadata did not answer); retrying every "
                        + retryEvery.toSeconds()
                        + " s");
                try {
                  Thread.sleep(retryEvery);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
  }

  private void build(RegionResolver.Found found, Tags tags) {
    Clouds.Settings settings =
        new Clouds.Settings(
            Region.of(found.region()),
            endpoint("AWS_ENDPOINT_URL_EFS"),
            endpoint("AWS_ENDPOINT_URL_STS"),
            options.adaptiveRetryMode(),
            fips(),
            endpoint("AWS_ENDPOINT_URL_S3FILES"));
    clouds = new Clouds(settings, new ApiMetrics(registry));
    provisioner =
        new AccessPointProvisioner(
            clouds,
            fileSystemIds,
            tags,
            options.maxAccessPointsPerFileSystem(),
            options.accessPointRefresh(),
            options.deleteAccessPointRootDir() ? remover : Optional.empty(),
            found.region());
    log.info(
        "EFS and S3 Files clients built for region {} (from {}), {} retries{}",
        found.region(),
        found.source(),
        options.adaptiveRetryMode() ? "adaptive" : "standard",
        settings.efsEndpoint().map(u -> ", EFS endpoint " + u).orElse("")
            + ", S3 Files endpoint "
            + settings.s3filesUri());
  }

  private boolean fips() {
    return "true".equalsIgnoreCase(env.getOrDefault("AWS_USE_FIPS_ENDPOINT", "").strip());
  }

  static boolean fipsRegion(String region) {
    return region.startsWith("us-") || region.startsWith("ca-");
  }

  private Optional<URI> endpoint(String name) {
    return Optional.ofNullable(env.get(name)).filter(s -> !s.isBlank()).map(URI::create);
  }

  @Override
  public void close() {
    Thread t = builder;
    if (t != null) {
      t.interrupt();
    }
    Clouds c = clouds;
    if (c != null) {
      c.close();
    }
    fileSystemIds.close();
  }
}

package io.efscsi.controller;

import io.efscsi.common.Plugin;
import io.efscsi.common.identity.IdentityService.Capability;
import io.efscsi.common.identity.Readiness;
import io.grpc.BindableService;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.efs.EfsClient;
import software.amazon.awssdk.services.efs.EfsClientBuilder;

/**
 * The controller side. It is ready once its cloud client is built (region found, SDK client
 * constructed); building retries in the background until it succeeds.
 */
public final class ControllerPlugin implements Plugin {

  private static final Logger log = LoggerFactory.getLogger(ControllerPlugin.class);

  private final ControllerOptions options;
  private final RegionResolver regions;
  private final Optional<URI> endpointOverride;
  private final Duration retryEvery;
  private volatile EfsClient efs;
  private volatile Thread builder;

  public ControllerPlugin(ControllerOptions options, Map<String, String> env) {
    this(
        options,
        new RegionResolver(options.region(), env, RegionResolver.instanceMetadata()),
        Optional.ofNullable(env.get("AWS_ENDPOINT_URL_EFS")).map(URI::create),
        Duration.ofSeconds(10));
  }

  ControllerPlugin(
      ControllerOptions options,
      RegionResolver regions,
      Optional<URI> endpointOverride,
      Duration retryEvery) {
    this.options = options;
    this.regions = regions;
    this.endpointOverride = endpointOverride;
    this.retryEvery = retryEvery;
  }

  @Override
  public String name() {
    return "controller";
  }

  @Override
  public List<BindableService> services() {
    return List.of();
  }

  @Override
  public Set<Capability> capabilities() {
    return Set.of(Capability.CONTROLLER_SERVICE, Capability.VOLUME_ACCESSIBILITY_CONSTRAINTS);
  }

  @Override
  public void start(Readiness readiness) {
    Readiness.Gate gate = readiness.gate("cloud client", "AWS client not built yet");
    builder =
        Thread.ofVirtual()
            .name("cloud-client")
            .start(() -> {
              while (!Thread.currentThread().isInterrupted()) {
                Optional<RegionResolver.Found> found = regions.resolve();
                if (found.isPresent()) {
                  efs = build(found.get());
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

  private EfsClient build(RegionResolver.Found found) {
    EfsClientBuilder b =
        EfsClient.builder()
            .region(Region.of(found.region()))
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .overrideConfiguration(o ->
                o.retryStrategy(
                    options.adaptiveRetryMode() ? RetryMode.ADAPTIVE_V2 : RetryMode.STANDARD));
    endpointOverride.ifPresent(b::endpointOverride);
    EfsClient client = b.build();
    log.info(
        "EFS client built for region {} (from {}), {} retries",
        found.region(),
        found.source(),
        options.adaptiveRetryMode() ? "adaptive" : "standard");
    return client;
  }

  @Override
  public void close() {
    Thread t = builder;
    if (t != null) {
      t.interrupt();
    }
    EfsClient c = efs;
    if (c != null) {
      c.close();
    }
  }
}

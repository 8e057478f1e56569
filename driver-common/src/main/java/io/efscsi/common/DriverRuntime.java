package io.efscsi.common;

import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.grpc.CsiServer;
import io.efscsi.common.http.HealthHttpServer;
import io.efscsi.common.http.PemTls;
import io.efscsi.common.identity.IdentityService;
import io.efscsi.common.identity.Readiness;
import io.efscsi.common.metrics.ProcessMetrics;
import io.grpc.BindableService;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running plugin process: Identity plus the given plugins' services on one CSI server, one
 * readiness shared by Probe and {@code /healthz}, and the optional health/metrics HTTP server.
 */
public final class DriverRuntime implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DriverRuntime.class);

  private final CommonOptions options;
  private final List<Plugin> plugins;
  private final Readiness readiness;
  private final CsiServer server;
  private final Optional<HealthHttpServer> http;
  private final PrometheusMeterRegistry registry;
  private volatile boolean closed;

  private DriverRuntime(
      CommonOptions options,
      List<Plugin> plugins,
      Readiness readiness,
      CsiServer server,
      Optional<HealthHttpServer> http,
      PrometheusMeterRegistry registry) {
    this.options = options;
    this.plugins = plugins;
    this.readiness = readiness;
    this.server = server;
    this.http = http;
    this.registry = registry;
  }

  /** Starts the plugins, then the CSI server and the HTTP server; cleans up on failure. */
  public static DriverRuntime start(CommonOptions options, BuildInfo build, List<Plugin> plugins)
      throws IOException {
    Readiness readiness = new Readiness();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new ProcessMetrics().bindTo(registry);

    Set<IdentityService.Capability> caps = EnumSet.noneOf(IdentityService.Capability.class);
    List<BindableService> services = new ArrayList<>();
    for (Plugin p : plugins) {
      caps.addAll(p.capabilities());
      services.addAll(p.services());
    }
    services.addFirst(new IdentityService(build, caps, readiness));

    List<Plugin> started = new ArrayList<>();
    CsiServer server = null;
    try {
      for (Plugin p : plugins) {
        p.bindMetrics(registry);
        p.start(readiness);
        started.add(p);
      }
      server =
          CsiServer.start(
              options.endpoint(),
              services,
              List.of(new io.efscsi.common.grpc.CallMetricsInterceptor(registry)));
      Optional<HealthHttpServer> http = Optional.empty();
      if (options.httpEndpoint().isPresent()) {
        Optional<SSLContext> tls = Optional.empty();
        if (options.metricsCertFile().isPresent()) {
          tls =
              Optional.of(
                  PemTls.serverContext(
                      options.metricsCertFile().get(), options.metricsKeyFile().orElseThrow()));
        }
        http =
            Optional.of(
                HealthHttpServer.start(options.httpEndpoint().get(), tls, readiness, registry));
      }
      log.info(
          "efs-csi {} started: {} on {}",
          build.version(),
          plugins.stream().map(Plugin::name).toList(),
          options.endpoint());
      return new DriverRuntime(options, List.copyOf(plugins), readiness, server, http, registry);
    } catch (IOException | RuntimeException e) {
      if (server != null) {
        server.shutdown(java.time.Duration.ZERO);
      }
      started.forEach(Plugin::close);
      registry.close();
      throw e;
    }
  }

  public Readiness readiness() {
    return readiness;
  }

  public CsiServer server() {
    return server;
  }

  public Optional<HealthHttpServer> http() {
    return http;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /**
   * Graceful stop: not ready at once, stop accepting calls, let in-flight calls finish within the
   * grace period, remove the socket, stop plugins. Proxies and mounts are left running.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    readiness.shuttingDown();
    http.ifPresent(HealthHttpServer::stop);
    server.shutdown(options.shutdownGrace());
    for (Plugin p : plugins.reversed()) {
      try {
        p.close();
      } catch (RuntimeException e) {
        log.warn("{} did not stop cleanly: {}", p.name(), e.toString());
      }
    }
    registry.close();
    log.info("efs-csi stopped");
  }
}

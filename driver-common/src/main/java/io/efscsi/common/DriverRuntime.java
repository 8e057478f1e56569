package io.efscsi.common;

import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.config.HostPort;
import io.efscsi.common.config.MetricsAuth;
import io.efscsi.common.grpc.CsiServer;
import io.efscsi.common.http.HealthHttpServer;
import io.efscsi.common.http.PemTls;
import io.efscsi.common.http.SelfSignedTls;
import io.efscsi.common.http.auth.AccessReviewer;
import io.efscsi.common.http.auth.CachingAccessReviewer;
import io.efscsi.common.http.auth.RequestAuthorizer;
import io.efscsi.common.identity.IdentityService;
import io.efscsi.common.identity.Readiness;
import io.efscsi.common.metrics.ProcessMetrics;
import io.grpc.BindableService;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Clock;
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

  /**
   * Starts the plugins, then the CSI server and the HTTP server; cleans up on failure. For {@code
   * --metrics-auth=none} only: {@code kubernetes} needs the reviewer of the other overload.
   */
  public static DriverRuntime start(CommonOptions options, BuildInfo build, List<Plugin> plugins)
      throws IOException {
    return start(options, build, plugins, Optional.empty());
  }

  /**
   * Starts the plugins, then the CSI server and the HTTP server; cleans up on failure.
   *
   * @param reviewer how {@code /metrics} requests are checked with {@code
   *     --metrics-auth=kubernetes} (the launcher's adapter on the API server; answers are cached
   *     here)
   */
  public static DriverRuntime start(
      CommonOptions options,
      BuildInfo build,
      List<Plugin> plugins,
      Optional<AccessReviewer> reviewer)
      throws IOException {
    if (options.metricsAuth() == MetricsAuth.KUBERNETES && reviewer.isEmpty()) {
      throw new IllegalArgumentException(
          "--metrics-auth=kubernetes needs a token and access reviewer, and none was given");
    }
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
      Optional<HealthHttpServer> http = startHttp(options, readiness, registry, reviewer);
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

  private static Optional<HealthHttpServer> startHttp(
      CommonOptions options,
      Readiness readiness,
      PrometheusMeterRegistry registry,
      Optional<AccessReviewer> reviewer)
      throws IOException {
    if (options.httpEndpoint().isEmpty()) {
      return Optional.empty();
    }
    HostPort address = options.httpEndpoint().get();
    Optional<SSLContext> tls = Optional.empty();
    if (options.metricsCertFile().isPresent()) {
      tls =
          Optional.of(
              PemTls.serverContext(
                  options.metricsCertFile().get(), options.metricsKeyFile().orElseThrow()));
    }
    Optional<RequestAuthorizer> auth = Optional.empty();
    if (options.metricsAuth() == MetricsAuth.KUBERNETES) {
      if (tls.isEmpty()) {
        SelfSignedTls self = SelfSignedTls.generate(address, hostname(), Clock.systemUTC());
        log.info(
            "no --metrics-cert-file: serving HTTPS with a self-signed certificate for {}, valid"
                + " until {}, SHA-256 fingerprint {}",
            self.certificate().getSubjectX500Principal().getName(),
            self.certificate().getNotAfter().toInstant(),
            self.fingerprint());
        tls = Optional.of(self.context());
      }
      auth =
          Optional.of(
              new RequestAuthorizer(
                  new CachingAccessReviewer(
                      reviewer.orElseThrow(),
                      Clock.systemUTC(),
                      registry,
                      CachingAccessReviewer.Settings.DEFAULT)));
    }
    return Optional.of(HealthHttpServer.start(address, tls, readiness, registry, auth));
  }

  /** This host's name (the node's, on the host network), for the self-signed certificate. */
  private static String hostname() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
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

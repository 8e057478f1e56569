package io.efscsi.common.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.efscsi.common.config.HostPort;
import io.efscsi.common.http.auth.RequestAuthorizer;
import io.efscsi.common.http.auth.RequestAuthorizer.Decision;
import io.efscsi.common.identity.Readiness;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /healthz} (200 when the plugin is ready, 503 with the reasons otherwise) and Prometheus
 * {@code /metrics}, over HTTP or HTTPS. Off unless an address is configured. At most a few requests
 * are served at once (their token and access reviews included), so a scraper storm cannot take the
 * process's threads or flood the API server. Other paths answer 404.
 *
 * <p>With a {@link RequestAuthorizer} (as {@code --metrics-auth=kubernetes}) {@code /metrics} wants
 * a bearer token allowed {@code get} on it: none or a rejected one is 401 with {@code
 * WWW-Authenticate: Bearer}, a user without the right 403, an API server that cannot be asked 503.
 * {@code /healthz} stays open, as kube components' always-allowed paths, but gives no reasons.
 */
public final class HealthHttpServer {

  private static final Logger log = LoggerFactory.getLogger(HealthHttpServer.class);
  private static final int MAX_CONCURRENT = 4;
  private static final String HEALTHZ = "/healthz";
  private static final String METRICS = "/metrics";

  private final HttpServer server;
  private final ExecutorService executor;

  private HealthHttpServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /** Serves both paths to anyone, {@code /healthz} with the reasons when not ready. */
  public static HealthHttpServer start(
      HostPort address,
      Optional<SSLContext> tls,
      Readiness readiness,
      PrometheusMeterRegistry registry)
      throws IOException {
    return start(address, tls, readiness, registry, Optional.empty());
  }

  /**
   * @param metricsAuth when present, {@code /metrics} is served only to requests it allows and
   *     {@code /healthz} says {@code ok} or {@code not ready} without the reasons (which may name
   *     volumes); it needs {@code tls}, as bearer tokens must not cross the network in the clear
   */
  public static HealthHttpServer start(
      HostPort address,
      Optional<SSLContext> tls,
      Readiness readiness,
      PrometheusMeterRegistry registry,
      Optional<RequestAuthorizer> metricsAuth)
      throws IOException {
    if (metricsAuth.isPresent() && tls.isEmpty()) {
      throw new IllegalArgumentException("authenticated /metrics needs HTTPS");
    }
    InetSocketAddress bind =
        address.host().isEmpty()
            ? new InetSocketAddress(address.port())
            : new InetSocketAddress(address.host(), address.port());
    HttpServer server;
    if (tls.isPresent()) {
      HttpsServer https = HttpsServer.create(bind, 16);
      https.setHttpsConfigurator(new HttpsConfigurator(tls.get()));
      server = https;
    } else {
      server = HttpServer.create(bind, 16);
    }
    Semaphore permits = new Semaphore(MAX_CONCURRENT);
    boolean terse = metricsAuth.isPresent();
    server.createContext(
        HEALTHZ, ex -> limited(permits, ex, HEALTHZ, () -> health(readiness.evaluate(), terse)));
    server.createContext(
        METRICS,
        ex ->
            limited(
                permits,
                ex,
                METRICS,
                () -> {
                  if (metricsAuth.isPresent()) {
                    Optional<Reply> refused = refusal(metricsAuth.get(), ex);
                    if (refused.isPresent()) {
                      return refused.get();
                    }
                  }
                  return new Reply(
                      200, registry.scrape(), "text/plain; version=0.0.4; charset=utf-8");
                }));
    ExecutorService executor =
        Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("http-", 0).factory());
    server.setExecutor(executor);
    server.start();
    log.info(
        "health and metrics on {}://{}:{}{}",
        tls.isPresent() ? "https" : "http",
        address.host().isEmpty() ? "*" : address.host(),
        server.getAddress().getPort(),
        terse ? " (/metrics for Kubernetes users allowed 'get' on it)" : "");
    return new HealthHttpServer(server, executor);
  }

  private static Reply health(Readiness.State state, boolean terse) {
    if (state.ready()) {
      return new Reply(200, "ok\n", "text/plain");
    }
    return new Reply(
        503,
        terse ? "not ready\n" : "not ready: " + String.join("; ", state.reasons()) + "\n",
        "text/plain");
  }

  /** Why the request may not have the metrics, as the reply to send; empty when it may. */
  private static Optional<Reply> refusal(RequestAuthorizer auth, HttpExchange ex) {
    Optional<String> header = Optional.ofNullable(ex.getRequestHeaders().getFirst("Authorization"));
    return switch (auth.decide(header, METRICS, "get")) {
      case Decision.Allowed _ -> Optional.empty();
      case Decision.Unauthenticated u -> {
        log.debug("{} from {}: 401, {}", METRICS, ex.getRemoteAddress(), u.why());
        yield Optional.of(
            new Reply(401, "Unauthorized\n", "text/plain", Map.of("WWW-Authenticate", "Bearer")));
      }
      case Decision.Forbidden f -> {
        log.debug(
            "{} from {}: 403 for user {}", METRICS, ex.getRemoteAddress(), f.user().username());
        yield Optional.of(
            new Reply(
                403,
                "Forbidden: user \""
                    + f.user().username()
                    + "\" may not "
                    + f.verb()
                    + " "
                    + f.path()
                    + "\n",
                "text/plain"));
      }
      case Decision.Unavailable _ ->
          Optional.of(
              new Reply(
                  503,
                  "cannot check the request's credentials with the API server now\n",
                  "text/plain"));
    };
  }

  /** The bound port (useful with port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  public void stop() {
    server.stop(0);
    executor.shutdownNow();
  }

  private record Reply(int status, String body, String contentType, Map<String, String> headers) {
    Reply(int status, String body, String contentType) {
      this(status, body, contentType, Map.of());
    }
  }

  private interface ReplySupplier {
    Reply get();
  }

  private static void limited(
      Semaphore permits, HttpExchange ex, String path, ReplySupplier handler) throws IOException {
    try (ex) {
      if (!path.equals(ex.getRequestURI().getPath())) {
        send(ex, new Reply(404, "not found\n", "text/plain"));
        return;
      }
      if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
        send(ex, new Reply(405, "method not allowed\n", "text/plain"));
        return;
      }
      if (!permits.tryAcquire()) {
        send(ex, new Reply(429, "too many requests\n", "text/plain"));
        return;
      }
      try {
        send(ex, handler.get());
      } finally {
        permits.release();
      }
    }
  }

  private static void send(HttpExchange ex, Reply reply) throws IOException {
    byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", reply.contentType());
    reply.headers().forEach(ex.getResponseHeaders()::set);
    boolean head = "HEAD".equals(ex.getRequestMethod());
    ex.sendResponseHeaders(reply.status(), head ? -1 : body.length);
    if (!head) {
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
  }
}

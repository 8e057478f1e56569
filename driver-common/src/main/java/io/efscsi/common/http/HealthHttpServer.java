package io.efscsi.common.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.efscsi.common.config.HostPort;
import io.efscsi.common.identity.Readiness;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
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
 * are served at once, so a scraper storm cannot take the process's threads.
 */
public final class HealthHttpServer {

  private static final Logger log = LoggerFactory.getLogger(HealthHttpServer.class);
  private static final int MAX_CONCURRENT = 4;

  private final HttpServer server;
  private final ExecutorService executor;

  private HealthHttpServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  public static HealthHttpServer start(
      HostPort address,
      Optional<SSLContext> tls,
      Readiness readiness,
      PrometheusMeterRegistry registry)
      throws IOException {
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
    server.createContext(
        "/healthz",
        ex ->
            limited(
                permits,
                ex,
                () -> {
                  Readiness.State s = readiness.evaluate();
                  return s.ready()
                      ? new Reply(200, "ok\n", "text/plain")
                      : new Reply(
                          503, "not ready: " + String.join("; ", s.reasons()) + "\n", "text/plain");
                }));
    server.createContext(
        "/metrics",
        ex ->
            limited(
                permits,
                ex,
                () ->
                    new Reply(200, registry.scrape(), "text/plain; version=0.0.4; charset=utf-8")));
    ExecutorService executor =
        Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("http-", 0).factory());
    server.setExecutor(executor);
    server.start();
    log.info(
        "health and metrics on {}://{}:{}",
        tls.isPresent() ? "https" : "http",
        address.host().isEmpty() ? "*" : address.host(),
        server.getAddress().getPort());
    return new HealthHttpServer(server, executor);
  }

  /** The bound port (useful with port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  public void stop() {
    server.stop(0);
    executor.shutdownNow();
  }

  private record Reply(int status, String body, String contentType) {}

  private interface ReplySupplier {
    Reply get();
  }

  private static void limited(Semaphore permits, HttpExchange ex, ReplySupplier handler)
      throws IOException {
    try (ex) {
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
    boolean head = "HEAD".equals(ex.getRequestMethod());
    ex.sendResponseHeaders(reply.status(), head ? -1 : body.length);
    if (!head) {
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
  }
}

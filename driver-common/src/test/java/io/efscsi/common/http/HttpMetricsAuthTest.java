package io.efscsi.common.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.efscsi.common.config.HostPort;
import io.efscsi.common.http.auth.CachingAccessReviewer;
import io.efscsi.common.http.auth.InMemoryAccessReviewer;
import io.efscsi.common.http.auth.RequestAuthorizer;
import io.efscsi.common.http.auth.UserInfo;
import io.efscsi.common.identity.Readiness;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The health and metrics server over real HTTPS on 127.0.0.1, its {@code /metrics} checked the way
 * {@code --metrics-auth=kubernetes} checks it, with the API server's reviews in memory.
 */
class HttpMetricsAuthTest {

  static final String GOOD = "eyJhbGciOiJSUzI1NiJ9.prometheus-token.sig";
  static final String UNPRIVILEGED = "eyJhbGciOiJSUzI1NiJ9.someone-else.sig";
  static final UserInfo PROMETHEUS =
      UserInfo.of("system:serviceaccount:monitoring:prometheus", "system:serviceaccounts");
  static final UserInfo OTHER = UserInfo.of("system:serviceaccount:default:app");

  private final InMemoryAccessReviewer api =
      new InMemoryAccessReviewer()
          .token(GOOD, PROMETHEUS)
          .token(UNPRIVILEGED, OTHER)
          .grant(PROMETHEUS.username(), "/metrics", "get");
  private final Readiness readiness = new Readiness(Clock.systemUTC(), Duration.ZERO);
  private final Readiness.Gate volumes =
      readiness.gate("volumes", "volume fs-0123456789abcdef0 is not mounted");
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final List<Logger> loggers =
      List.of(
          (Logger) LoggerFactory.getLogger(HealthHttpServer.class),
          (Logger) LoggerFactory.getLogger(RequestAuthorizer.class));
  private SelfSignedTls tls;
  private HealthHttpServer server;
  private HttpClient client;

  @BeforeEach
  void start() throws IOException, GeneralSecurityException {
    registry.counter("efs_csi_test_marker").increment();
    logs.start();
    for (Logger l : loggers) {
      l.setLevel(Level.DEBUG);
      l.addAppender(logs);
    }
    tls = SelfSignedTls.generate(new HostPort("127.0.0.1", 0), "test-host", Clock.systemUTC());
    server =
        HealthHttpServer.start(
            new HostPort("127.0.0.1", 0),
            Optional.of(tls.context()),
            readiness,
            registry,
            Optional.of(
                new RequestAuthorizer(
                    new CachingAccessReviewer(
                        api,
                        Clock.systemUTC(),
                        registry,
                        CachingAccessReviewer.Settings.DEFAULT))));
    client =
        HttpClient.newBuilder()
            .sslContext(trusting(tls))
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  @AfterEach
  void stop() {
    for (Logger l : loggers) {
      l.detachAppender(logs);
    }
    server.stop();
    client.close();
  }

  /** A client context that trusts exactly the server's self-signed certificate. */
  static SSLContext trusting(SelfSignedTls tls) throws GeneralSecurityException, IOException {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("server", tls.certificate());
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  private HttpResponse<String> get(String scheme, String path, Optional<String> authorization)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + server.port() + path))
            .timeout(Duration.ofSeconds(10));
    authorization.ifPresent(a -> b.header("Authorization", a));
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> metrics(Optional<String> authorization)
      throws IOException, InterruptedException {
    return get("https", "/metrics", authorization);
  }

  @Test
  void noTokenIs401WithABearerChallenge() throws Exception {
    HttpResponse<String> r = metrics(Optional.empty());
    assertEquals(401, r.statusCode());
    assertEquals(Optional.of("Bearer"), r.headers().firstValue("WWW-Authenticate"));
    assertFalse(r.body().contains("efs_csi_test_marker"));
    assertEquals(0, api.tokenReviews(), "no token, no review");
  }

  @Test
  void aTokenTheApiServerRejectsIs401() throws Exception {
    HttpResponse<String> r = metrics(Optional.of("Bearer not-a-token"));
    assertEquals(401, r.statusCode());
    assertEquals(Optional.of("Bearer"), r.headers().firstValue("WWW-Authenticate"));
    assertEquals(1, api.tokenReviews());
    assertEquals(0, api.accessReviews());
    assertEquals(401, metrics(Optional.of("Basic dXNlcjpwYXNz")).statusCode(), "not a bearer");
  }

  @Test
  void aUserWithoutTheRightIs403NamingTheUserNotTheToken() throws Exception {
    HttpResponse<String> r = metrics(Optional.of("Bearer " + UNPRIVILEGED));
    assertEquals(403, r.statusCode());
    assertTrue(r.body().contains("system:serviceaccount:default:app"), r.body());
    assertTrue(r.body().contains("get /metrics"), r.body());
    assertFalse(r.body().contains(UNPRIVILEGED));
    assertFalse(r.body().contains("efs_csi_test_marker"));
  }

  @Test
  void anAllowedUserGetsTheMetrics() throws Exception {
    HttpResponse<String> r = metrics(Optional.of("Bearer " + GOOD));
    assertEquals(200, r.statusCode());
    assertTrue(r.body().contains("efs_csi_test_marker_total 1.0"), r.body());
    assertTrue(
        r.body()
            .contains("efs_csi_http_auth_reviews_total{kind=\"token\",result=\"authenticated\"} 1"),
        r.body());
    // the scheme in any case, as the API server accepts it; answered from the cache
    assertEquals(200, metrics(Optional.of("bearer " + GOOD)).statusCode());
    assertEquals(1, api.tokenReviews());
    assertEquals(1, api.accessReviews());
  }

  @Test
  void healthzIsOpenButGivesNoReasons() throws Exception {
    HttpResponse<String> r = get("https", "/healthz", Optional.empty());
    assertEquals(503, r.statusCode());
    assertEquals("not ready\n", r.body());
    volumes.open();
    r = get("https", "/healthz", Optional.empty());
    assertEquals(200, r.statusCode());
    assertEquals("ok\n", r.body());
    assertEquals(0, api.tokenReviews());
  }

  @Test
  void anApiServerThatCannotBeAskedIs503WithoutDetails() throws Exception {
    api.failWith("tokenreviews.authentication.k8s.io is forbidden");
    HttpResponse<String> r = metrics(Optional.of("Bearer " + GOOD));
    assertEquals(503, r.statusCode());
    assertFalse(r.body().contains("forbidden"), r.body());
    assertFalse(r.body().contains(GOOD));
    api.failWith(null);
    assertEquals(200, metrics(Optional.of("Bearer " + GOOD)).statusCode(), "not cached");
  }

  @Test
  void plainHttpToTheHttpsPortFails() {
    assertThrows(IOException.class, () -> get("http", "/metrics", Optional.of("Bearer " + GOOD)));
  }

  @Test
  void otherPathsAre404() throws Exception {
    assertEquals(404, get("https", "/metricsx", Optional.of("Bearer " + GOOD)).statusCode());
    assertEquals(404, get("https", "/healthz/x", Optional.empty()).statusCode());
    assertEquals(0, api.tokenReviews());
  }

  @Test
  void tokensNeverReachTheLogs() throws Exception {
    api.failWith("connection refused");
    metrics(Optional.of("Bearer " + GOOD));
    api.failWith(null);
    metrics(Optional.of("Bearer " + GOOD));
    metrics(Optional.of("Bearer " + UNPRIVILEGED));
    metrics(Optional.of("Bearer rejected-token-value"));
    assertFalse(logs.list.isEmpty(), "the requests were logged at debug");
    for (ILoggingEvent e : logs.list) {
      String line = e.getFormattedMessage();
      assertFalse(line.contains(GOOD), line);
      assertFalse(line.contains(UNPRIVILEGED), line);
      assertFalse(line.contains("rejected-token-value"), line);
    }
  }

  @Test
  void authenticationNeedsHttps() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            HealthHttpServer.start(
                new HostPort("127.0.0.1", 0),
                Optional.empty(),
                readiness,
                registry,
                Optional.of(new RequestAuthorizer(api))));
  }

  @Test
  void withoutAuthenticationEveryoneGetsMetricsAndHealthzReasons() throws Exception {
    HealthHttpServer open =
        HealthHttpServer.start(new HostPort("127.0.0.1", 0), Optional.empty(), readiness, registry);
    try (HttpClient plain = HttpClient.newHttpClient()) {
      String base = "http://127.0.0.1:" + open.port();
      HttpResponse<String> m =
          plain.send(
              HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, m.statusCode());
      assertTrue(m.body().contains("efs_csi_test_marker_total 1.0"));
      HttpResponse<String> h =
          plain.send(
              HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(503, h.statusCode());
      assertEquals("not ready: volumes: volume fs-0123456789abcdef0 is not mounted\n", h.body());
    } finally {
      open.stop();
    }
  }
}

package io.efscsi.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.efscsi.common.config.CommonOptions;
import io.efscsi.common.config.HostPort;
import io.efscsi.common.config.MetricsAuth;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.common.http.auth.AccessReviewer;
import io.efscsi.common.http.auth.InMemoryAccessReviewer;
import io.efscsi.common.http.auth.UserInfo;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** {@code --metrics-auth=kubernetes} wired by the runtime: HTTPS, self-signed, reviewed, cached. */
class DriverRuntimeMetricsAuthTest {

  static final BuildInfo BUILD = new BuildInfo("test", "none", "2026-01-01T00:00:00Z");

  @TempDir Path dir;

  private CommonOptions options(MetricsAuth auth) {
    return new CommonOptions(
        new Endpoint.Unix(dir.resolve("csi.sock")),
        Optional.of(new HostPort("127.0.0.1", 0)),
        Optional.empty(),
        Optional.empty(),
        auth,
        2,
        Duration.ZERO);
  }

  /** What a scraper with {@code insecureSkipVerify} does: accept any server certificate. */
  static SSLContext trustingAnything() throws Exception {
    TrustManager skipVerify =
        new X509ExtendedTrustManager() {
          @Override
          public void checkClientTrusted(X509Certificate[] c, String a) {}

          @Override
          public void checkServerTrusted(X509Certificate[] c, String a) {}

          @Override
          public void checkClientTrusted(X509Certificate[] c, String a, Socket s) {}

          @Override
          public void checkServerTrusted(X509Certificate[] c, String a, Socket s) {}

          @Override
          public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e) {}

          @Override
          public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) {}

          @Override
          public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
          }
        };
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, new TrustManager[] {skipVerify}, null);
    return ctx;
  }

  @Test
  void kubernetesModeServesReviewedMetricsOnASelfSignedCertificateLoggedByFingerprint()
      throws Exception {
    InMemoryAccessReviewer api =
        new InMemoryAccessReviewer()
            .token("scraper-token", UserInfo.of("system:serviceaccount:monitoring:prometheus"))
            .grant("system:serviceaccount:monitoring:prometheus", "/metrics", "get");
    Logger runtimeLog = (Logger) LoggerFactory.getLogger(DriverRuntime.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    runtimeLog.addAppender(logs);
    try (DriverRuntime runtime =
            DriverRuntime.start(
                options(MetricsAuth.KUBERNETES), BUILD, List.of(), Optional.of(api));
        HttpClient client = HttpClient.newBuilder().sslContext(trustingAnything()).build()) {
      URI metrics =
          URI.create("https://127.0.0.1:" + runtime.http().orElseThrow().port() + "/metrics");
      HttpResponse<String> denied =
          client.send(
              HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(401, denied.statusCode());
      HttpResponse<String> ok = null;
      for (int i = 0; i < 5; i++) {
        ok =
            client.send(
                HttpRequest.newBuilder(metrics)
                    .header("Authorization", "Bearer scraper-token")
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, ok.statusCode());
      }
      assertEquals(1, api.tokenReviews(), "the runtime caches the reviews");
      assertEquals(1, api.accessReviews());
      assertTrue(
          ok.body()
              .contains("efs_csi_http_auth_reviews_total{kind=\"access\",result=\"allowed\"} 1.0"),
          ok.body());

      X509Certificate served =
          (X509Certificate) ok.sslSession().orElseThrow().getPeerCertificates()[0];
      assertEquals(served.getSubjectX500Principal(), served.getIssuerX500Principal());
      assertEquals("EC", served.getPublicKey().getAlgorithm());
      String fingerprint =
          HexFormat.ofDelimiter(":")
              .withUpperCase()
              .formatHex(MessageDigest.getInstance("SHA-256").digest(served.getEncoded()));
      assertEquals(
          1,
          logs.list.stream()
              .filter(e -> e.getFormattedMessage().contains("SHA-256 fingerprint " + fingerprint))
              .count(),
          "the fingerprint is logged once");
    } finally {
      runtimeLog.detachAppender(logs);
    }
  }

  @Test
  void kubernetesModeWithoutAReviewerDoesNotStart() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DriverRuntime.start(options(MetricsAuth.KUBERNETES), BUILD, List.of()));
    assertTrue(e.getMessage().contains("--metrics-auth=kubernetes"), e.getMessage());
  }

  @Test
  void noneModeStaysPlainHttp() throws Exception {
    AccessReviewer unused = new InMemoryAccessReviewer().failWith("must not be asked");
    try (DriverRuntime runtime =
            DriverRuntime.start(options(MetricsAuth.NONE), BUILD, List.of(), Optional.of(unused));
        HttpClient client = HttpClient.newHttpClient()) {
      HttpResponse<String> r =
          client.send(
              HttpRequest.newBuilder(
                      URI.create(
                          "http://127.0.0.1:" + runtime.http().orElseThrow().port() + "/metrics"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
    }
  }
}

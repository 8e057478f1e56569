package io.efscsi.controller.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.regions.Region;

/**
 * How the S3 Files client reads answers the emulator never gives: error codes only in the body's
 * namespaced {@code __type}, a conflict naming the access point, a body that is not JSON; and where
 * it sends requests by default.
 */
class S3FilesCloudErrorsTest {

  HttpServer server;
  volatile int status;
  volatile String body;
  final List<String> requests = new CopyOnWriteArrayList<>();
  Clouds clouds;
  Cloud cloud;

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.createContext(
        "/",
        ex -> {
          try (ex) {
            requests.add(
                ex.getRequestMethod()
                    + " "
                    + ex.getRequestURI()
                    + " "
                    + ex.getRequestHeaders().getFirst("Authorization"));
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
            if (b.length > 0) {
              ex.getResponseBody().write(b);
            }
          }
        });
    server.start();
    URI endpoint = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    clouds =
        new Clouds(
            new Clouds.Settings(
                Region.US_EAST_1,
                Optional.empty(),
                Optional.empty(),
                false,
                false,
                Optional.of(endpoint)),
            new ApiMetrics(new SimpleMeterRegistry()));
    cloud = clouds.s3files();
  }

  @AfterEach
  void stop() {
    clouds.close();
    server.stop(0);
  }

  CloudException fails(Runnable call) {
    return assertThrows(CloudException.class, call::run);
  }

  @Test
  void theCodeIsReadFromANamespacedTypeInTheBody() {
    status = 400;
    body = "{\"__type\":\"com.amazonaws.s3files#ValidationException\",\"message\":\"bad path\"}";
    CloudException e =
        fails(() ->
            cloud.createAccessPoint(
                new Cloud.AccessPointRequest(
                    "t", "fs-0123456789abcdef0", 1, 1, "/x", "700", Map.of())));
    assertEquals(CloudException.Reason.BAD_REQUEST, e.reason());
    assertTrue(e.getMessage().contains("bad path"), e.getMessage());
    assertEquals(1, requests.size(), "a 400 is not retried");
    String r = requests.getFirst();
    assertTrue(r.startsWith("PUT /access-points "), r);
    assertTrue(r.contains("/us-east-1/s3files/aws4_request"), r);
  }

  @Test
  void aConflictNamesTheExistingAccessPoint() {
    status = 409;
    body =
        "{\"__type\":\"ConflictException\",\"message\":\"token in use\","
            + "\"resourceId\":\"fsap-0123456789abcdef0\",\"resourceType\":\"AccessPoint\"}";
    CloudException e =
        fails(() ->
            cloud.createAccessPoint(
                new Cloud.AccessPointRequest(
                    "t", "fs-0123456789abcdef0", 1, 1, "/x", "700", Map.of())));
    assertEquals(CloudException.Reason.ALREADY_EXISTS, e.reason());
    assertEquals(Optional.of("fsap-0123456789abcdef0"), e.existingId());
  }

  @Test
  void notFoundDeletesAreFalseAndAnswersThatAreNotJsonAreUnavailable() {
    status = 404;
    body = "{\"__type\":\"ResourceNotFoundException\",\"message\":\"no such access point\"}";
    assertFalse(cloud.deleteAccessPoint("fsap-0123456789abcdef0"));
    assertTrue(
        requests.getFirst().startsWith("DELETE /access-points/fsap-0123456789abcdef0 "),
        requests.getFirst());
    status = 200;
    body = "<html>proxy error</html>";
    CloudException e = fails(() -> cloud.listAccessPoints("fs-0123456789abcdef0", ap -> {}));
    assertEquals(CloudException.Reason.UNAVAILABLE, e.reason());
  }

  @Test
  void theDefaultEndpointIsTheRegionalOneAndFipsHasItsOwn() {
    Clouds.Settings s =
        new Clouds.Settings(Region.EU_WEST_1, Optional.empty(), Optional.empty(), true, false);
    assertEquals(URI.create("https://s3files.eu-west-1.amazonaws.com"), s.s3filesUri());
    Clouds.Settings fips =
        new Clouds.Settings(Region.US_EAST_2, Optional.empty(), Optional.empty(), true, true);
    assertEquals(URI.create("https://s3files-fips.us-east-2.amazonaws.com"), fips.s3filesUri());
    Clouds.Settings cn =
        new Clouds.Settings(Region.CN_NORTH_1, Optional.empty(), Optional.empty(), true, false);
    assertEquals(URI.create("https://s3files.cn-north-1.amazonaws.com.cn"), cn.s3filesUri());
  }
}

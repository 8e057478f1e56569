package io.efscsi.node.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against an IMDSv2 emulator on 127.0.0.1 (token PUT, token-guarded GETs). */
class ImdsNodeMetadataTest {

  static final String TOKEN = "AQAEAFake-Token==";

  HttpServer server;
  final List<String> requests = new CopyOnWriteArrayList<>();
  volatile Map<String, String> metadata =
      Map.of(
          "/latest/meta-data/instance-id", "i-0abc123def4567890",
          "/latest/meta-data/placement/region", "eu-central-1",
          "/latest/meta-data/placement/availability-zone", "eu-central-1b");

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private void handle(HttpExchange x) throws IOException {
    String path = x.getRequestURI().getPath();
    requests.add(x.getRequestMethod() + " " + path);
    if (x.getRequestMethod().equals("PUT") && path.equals("/latest/api/token")) {
      String ttl = x.getRequestHeaders().getFirst("x-aws-ec2-metadata-token-ttl-seconds");
      if (ttl != null) {
        x.getResponseHeaders().add("x-aws-ec2-metadata-token-ttl-seconds", ttl);
      }
      reply(x, ttl != null ? 200 : 400, TOKEN);
    } else if (!TOKEN.equals(x.getRequestHeaders().getFirst("x-aws-ec2-metadata-token"))) {
      reply(x, 401, "");
    } else if (metadata.containsKey(path)) {
      reply(x, 200, metadata.get(path));
    } else {
      reply(x, 404, "Not Found");
    }
  }

  private static void reply(HttpExchange x, int code, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    x.sendResponseHeaders(code, b.length == 0 ? -1 : b.length);
    if (b.length > 0) {
      x.getResponseBody().write(b);
    }
    x.close();
  }

  private Map<String, String> env() {
    return Map.of(
        "AWS_EC2_METADATA_SERVICE_ENDPOINT",
        "http://127.0.0.1:" + server.getAddress().getPort(),
        "CSI_NODE_NAME",
        "ip-10-0-0-1.ec2.internal");
  }

  @Test
  void readsInstanceIdRegionAndZoneWithAnImdsV2Token() {
    FixedNodeMetadata m = new ImdsNodeMetadata(env()).load();

    assertEquals("i-0abc123def4567890", m.nodeId());
    assertEquals("eu-central-1", m.region());
    assertEquals(Optional.of("eu-central-1b"), m.availabilityZone());
    assertEquals("PUT /latest/api/token", requests.get(0));
    assertTrue(
        requests.containsAll(
            List.of(
                "GET /latest/meta-data/instance-id",
                "GET /latest/meta-data/placement/region",
                "GET /latest/meta-data/placement/availability-zone")),
        requests.toString());
  }

  @Test
  void aMissingItemIsUnavailableNamingThePath() {
    metadata = Map.of("/latest/meta-data/instance-id", "i-0abc123def4567890");

    var e =
        assertThrows(
            NodeMetadataSource.Unavailable.class, () -> new ImdsNodeMetadata(env()).load());
    assertTrue(
        e.getMessage().startsWith("GET /latest/meta-data/placement/region: "), e.getMessage());
  }

  @Test
  void disabledByEnvironmentAsksNothing() {
    var env = new HashMap<>(env());
    env.put("AWS_EC2_METADATA_DISABLED", "TRUE");

    var e =
        assertThrows(NodeMetadataSource.Unavailable.class, () -> new ImdsNodeMetadata(env).load());
    assertEquals("disabled by AWS_EC2_METADATA_DISABLED=true", e.getMessage());
    assertEquals(List.of(), requests);
  }

  @Test
  void hyperPodNodesSkipImds() {
    var env = new HashMap<>(env());
    env.put("CSI_NODE_NAME", "hyperpod-i-0abc");

    assertThrows(NodeMetadataSource.Unavailable.class, () -> new ImdsNodeMetadata(env).load());
    assertEquals(List.of(), requests);
  }

  @Test
  void nothingListeningIsUnavailableQuickly() throws IOException {
    int port = server.getAddress().getPort();
    server.stop(0);
    long start = System.nanoTime();

    var e =
        assertThrows(
            NodeMetadataSource.Unavailable.class,
            () ->
                new ImdsNodeMetadata(
                        Map.of("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:" + port))
                    .load());
    assertTrue(e.getMessage().startsWith("GET /latest/meta-data/instance-id: "), e.getMessage());
    assertTrue(System.nanoTime() - start < 5_000_000_000L, "gave up within 5 s");
  }
}

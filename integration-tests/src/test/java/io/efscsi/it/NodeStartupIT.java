package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeGetInfoRequest;
import io.efscsi.csi.v1.NodeGetInfoResponse;
import io.efscsi.csi.v1.NodeGetVolumeStatsRequest;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodeServiceCapability;
import io.efscsi.csi.v1.ProbeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged node plugin at start, as kubelet meets it: the registration calls NodeGetInfo the
 * moment the socket appears (kubelet's plugin watcher, with a 2-minute deadline), while the node
 * metadata is still on its way from a slow instance metadata service. No call may fail in that
 * window; where the metadata can never be known, the answer says why.
 */
class NodeStartupIT {

  /** Each instance-metadata answer takes this long (IMDS's timeout in the plugin is 1 s). */
  static final Duration IMDS_DELAY = Duration.ofMillis(600);

  /**
   * Every start opens the window (the metadata takes at least one slow answer, the calls come at
   * the socket's first moment; the test checks most calls came in it), so a few starts suffice.
   */
  static final int STARTS = 6;

  static final int CALLS_PER_START = 20;

  @TempDir Path tmp;

  private HttpServer imds;

  @BeforeEach
  void slowInstanceMetadata() throws IOException {
    imds = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    imds.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    imds.createContext("/latest/", this::answer);
    imds.start();
  }

  @AfterEach
  void stop() {
    imds.stop(0);
  }

  private void answer(HttpExchange ex) throws IOException {
    try {
      Thread.sleep(IMDS_DELAY);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    String path = ex.getRequestURI().getPath();
    String body =
        switch (path) {
          case "/latest/api/token" -> "token-for-node-startup-it";
          case "/latest/meta-data/instance-id" -> "i-0123456789abcdef0";
          case "/latest/meta-data/placement/region" -> "us-east-1";
          case "/latest/meta-data/placement/availability-zone" -> "us-east-1c";
          default -> null;
        };
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    if (path.equals("/latest/api/token")) {
      ex.getResponseHeaders().add("x-aws-ec2-metadata-token-ttl-seconds", "300");
    }
    ex.sendResponseHeaders(body == null ? 404 : 200, bytes.length == 0 ? -1 : bytes.length);
    try (var out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  private Map<String, String> env(boolean withImds) {
    Map<String, String> env = new java.util.HashMap<>(PackagedDriver.cleanEnv());
    if (withImds) {
      env.remove("AWS_EC2_METADATA_DISABLED");
      env.put(
          "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:" + imds.getAddress().getPort());
    }
    return env;
  }

  private PackagedDriver start(String name, Map<String, String> env, String... extra)
      throws IOException {
    Path dir = tmp.resolve(name);
    Path socket = dir.resolve("csi.sock");
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "node",
            "--endpoint=unix://" + socket,
            "--state-dir=" + dir.resolve("state"),
            "--kubelet-root-dir=" + tmp,
            "--proxy-cgroup=none"));
    args.addAll(List.of(extra));
    return PackagedDriver.start(
        socket,
        Path.of("target/it-logs/NodeStartupIT-" + name + ".log"),
        env,
        args.toArray(String[]::new));
  }

  /** Polls for the socket file every millisecond, as kubelet's plugin watcher sees it appear. */
  private static void awaitSocketFile(PackagedDriver d) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!PackagedDriver.connectable(d.socket)) {
      if (!d.process.isAlive() || System.nanoTime() > deadline) {
        throw new AssertionError("no socket:\n" + d.logText());
      }
      Thread.sleep(1);
    }
  }

  @Test
  void registrationAtTheSocketsFirstMomentNeverFailsWhileMetadataIsSlow() throws Exception {
    int earlyCalls = 0;
    long slowest = 0;
    for (int run = 0; run < STARTS; run++) {
      try (PackagedDriver d = start("run-" + run, env(true))) {
        awaitSocketFile(d);
        try (CsiChannels.Client c = CsiChannels.open(new Endpoint.Unix(d.socket))) {
          var node = NodeGrpc.newBlockingStub(c.channel());
          List<CompletableFuture<Long>> calls = new ArrayList<>();
          try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < CALLS_PER_START; i++) {
              calls.add(
                  CompletableFuture.supplyAsync(
                      () -> {
                        long t0 = System.nanoTime();
                        NodeGetInfoResponse info =
                            node.withDeadlineAfter(2, TimeUnit.MINUTES)
                                .nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
                        assertEquals("i-0123456789abcdef0", info.getNodeId());
                        assertEquals(
                            "us-east-1c",
                            info.getAccessibleTopology()
                                .getSegmentsOrThrow("topology.kubernetes.io/zone"));
                        return System.nanoTime() - t0;
                      },
                      pool));
            }
            for (CompletableFuture<Long> f : calls) {
              long nanos;
              try {
                nanos = f.get(3, TimeUnit.MINUTES);
              } catch (java.util.concurrent.ExecutionException e) {
                throw new AssertionError(
                    "run "
                        + run
                        + ": NodeGetInfo failed at start: "
                        + e.getCause()
                        + "\n"
                        + d.logText(),
                    e.getCause());
              }
              slowest = Math.max(slowest, nanos);
              if (nanos > IMDS_DELAY.toNanos()) {
                earlyCalls++;
              }
            }
          }
        }
        assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
        String log = d.logText();
        assertFalse(log.contains("not known yet"), "a call was refused:\n" + log);
      }
    }
    // The calls came before the metadata: most of them had to wait for it (at least one metadata
    // request's time), which is the window in which the registration used to be refused.
    assertTrue(
        earlyCalls >= STARTS * CALLS_PER_START / 2,
        "only "
            + earlyCalls
            + " of "
            + STARTS * CALLS_PER_START
            + " calls came before the"
            + " metadata was known; the test no longer covers the start-up window");
    System.out.printf(
        "NodeStartupIT: %d starts x %d NodeGetInfo calls at the socket's first moment: all"
            + " answered; %d waited for the metadata, slowest %d ms%n",
        STARTS, CALLS_PER_START, earlyCalls, TimeUnit.NANOSECONDS.toMillis(slowest));
  }

  @Test
  void metadataThatCanNeverBeKnownIsNamedInTheAnswerAndTheProbe() throws Exception {
    // no IMDS, no CSI_NODE_NAME, no region: nothing can say who this node is
    try (PackagedDriver d = start("never", env(false))) {
      d.awaitSocket(Duration.ofSeconds(30));
      long t0 = System.nanoTime();
      StatusRuntimeException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              StatusRuntimeException.class,
              () ->
                  d.node()
                      .withDeadlineAfter(4, TimeUnit.SECONDS)
                      .nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()));
      long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
      String message = e.getStatus().getDescription();
      assertTrue(message.contains("node metadata is not known yet"), message);
      assertTrue(message.contains("CSI_NODE_NAME") && message.contains("AWS_REGION"), message);
      // it waited for the metadata, then answered with the reason before the deadline ran out
      // (DEADLINE_EXCEEDED would tell kubelet nothing)
      assertTrue(waited >= 2000, "answered at once instead of waiting: " + waited + " ms");
      var probe = d.identity().probe(ProbeRequest.getDefaultInstance());
      assertFalse(probe.getReady().getValue(), "not ready without metadata");
      assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
      String log = d.logText();
      assertEquals(
          1,
          log.lines().filter(l -> l.contains("node metadata not available from instance")).count(),
          "each source's failure is logged once:\n" + log);
    }
  }

  @Test
  void capabilitiesAndStatsOfAMissingPathAsTheSpecSays() throws Exception {
    Map<String, String> env = env(false);
    env.put("CSI_NODE_NAME", "node-startup-it");
    env.put("AWS_REGION", "us-east-1");
    for (boolean optIn : List.of(false, true)) {
      try (PackagedDriver d =
          optIn ? start("caps-opt-in", env, "--vol-metrics-opt-in") : start("caps", env)) {
        d.awaitSocket(Duration.ofSeconds(30));
        var types =
            d
                .node()
                .nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList()
                .stream()
                .map(c -> c.getRpc().getType())
                .toList();
        // GET_VOLUME_STATS (and the condition it carries) only with --vol-metrics-opt-in, as the
        // Go driver advertises it
        List<NodeServiceCapability.RPC.Type> expected =
            new ArrayList<>(
                List.of(
                    NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME,
                    NodeServiceCapability.RPC.Type.SINGLE_NODE_MULTI_WRITER));
        if (optIn) {
          expected.add(NodeServiceCapability.RPC.Type.GET_VOLUME_STATS);
          expected.add(NodeServiceCapability.RPC.Type.VOLUME_CONDITION);
        }
        assertEquals(expected, types);
        // CSI spec, NodeGetVolumeStats errors: "Volume does not exist: Indicates that the
        // volume with the specified volume_id does not exist on specified volume_path.
        // NOT_FOUND" - csi-sanity asks with a relative path that does not exist
        for (String path : List.of("some/path", tmp.resolve("nothing-here").toString())) {
          StatusRuntimeException e =
              org.junit.jupiter.api.Assertions.assertThrows(
                  StatusRuntimeException.class,
                  () ->
                      d.node()
                          .nodeGetVolumeStats(
                              NodeGetVolumeStatsRequest.newBuilder()
                                  .setVolumeId("fs-12345678")
                                  .setVolumePath(path)
                                  .build()));
          assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), path + ": " + e);
          assertTrue(e.getStatus().getDescription().contains(path), e.toString());
        }
        assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
      }
    }
  }
}

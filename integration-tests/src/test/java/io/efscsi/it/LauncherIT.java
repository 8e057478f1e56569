package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.csi.v1.GetPluginCapabilitiesRequest;
import io.efscsi.csi.v1.GetPluginInfoRequest;
import io.efscsi.csi.v1.PluginCapability.Service.Type;
import io.efscsi.csi.v1.ProbeRequest;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/** The packaged launcher as a separate process, driven through a real gRPC client. */
class LauncherIT {

  @TempDir Path tmp;

  /** Whether the default proxy cgroup parent was there before the test (a node may make it). */
  private boolean cgroupParentBefore;

  @org.junit.jupiter.api.BeforeEach
  void noteCgroupParent() {
    cgroupParentBefore = defaultCgroupParentExists();
  }

  @org.junit.jupiter.api.AfterEach
  void removeCgroupParentMadeByTheTest() throws Exception {
    if (!cgroupParentBefore && defaultCgroupParentExists()) {
      HostCleanup.removeCgroupParent("efs-csi");
    }
  }

  private static boolean defaultCgroupParentExists() {
    return HostCleanup.CGROUP_ROOTS.stream().anyMatch(r -> Files.isDirectory(r.resolve("efs-csi")));
  }

  private Path logFor(TestInfo info) {
    return Path.of("target/it-logs/" + info.getTestMethod().orElseThrow().getName() + ".log");
  }

  /** Service types by name, and the volume expansion as "VolumeExpansion.<type>". */
  private static Set<String> capabilities(PackagedDriver d) {
    return d
        .identity()
        .getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance())
        .getCapabilitiesList()
        .stream()
        .map(c ->
            c.hasVolumeExpansion()
                ? "VolumeExpansion." + c.getVolumeExpansion().getType()
                : c.getService().getType().name())
        .collect(Collectors.toSet());
  }

  private static boolean probe(PackagedDriver d) {
    return d.identity().probe(ProbeRequest.getDefaultInstance()).getReady().getValue();
  }

  private static boolean eventually(PackagedDriver d, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      if (probe(d)) {
        return true;
      }
      Thread.sleep(100);
    }
    return false;
  }

  /** What the node DaemonSet gives the plugin: its node's name and region. */
  static Map<String, String> nodeEnv() {
    Map<String, String> env = new java.util.HashMap<>(PackagedDriver.cleanEnv());
    env.put("CSI_NODE_NAME", "launcher-it-node");
    env.put("AWS_REGION", "us-east-1");
    return env;
  }

  @Test
  void nodeProbeFlipsFromNotReadyToReadyAndSigtermExitsCleanly(TestInfo info) throws Exception {
    Path socket = tmp.resolve("plugin/csi.sock");
    Path stateDir = tmp.resolve("state");
    Files.writeString(stateDir, "a file where the state dir should be");
    try (PackagedDriver d =
        PackagedDriver.start(
            socket,
            logFor(info),
            nodeEnv(),
            "node",
            "--endpoint=unix://" + socket,
            "--state-dir=" + stateDir,
            "--v=5")) {
      d.awaitSocket(Duration.ofSeconds(20));

      var infoResponse = d.identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
      assertEquals("efs.csi.aws.com", infoResponse.getName());
      assertFalse(infoResponse.getVendorVersion().isBlank());
      assertEquals(Set.of(Type.VOLUME_ACCESSIBILITY_CONSTRAINTS.name()), capabilities(d));

      assertFalse(probe(d), "state dir is not usable yet");
      Files.delete(stateDir);
      assertTrue(
          eventually(d, Duration.ofSeconds(10)), "Probe did not flip to ready:\n" + d.logText());
      assertTrue(Files.isDirectory(stateDir));

      assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
      assertFalse(Files.exists(socket), "socket left behind after SIGTERM");
      String log = d.logText();
      assertTrue(log.contains("plugin is not ready: state dir"), log);
      assertTrue(log.contains("plugin is ready"), log);
      assertTrue(log.contains("received SIGTERM"), log);
      assertTrue(log.contains("efs-csi stopped"), log);
    }
  }

  @Test
  void controllerAdvertisesTheControllerServiceAndServesHealthAndMetrics(TestInfo info)
      throws Exception {
    Path socket = tmp.resolve("csi.sock");
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    try (PackagedDriver d =
        PackagedDriver.start(
            socket,
            logFor(info),
            PackagedDriver.cleanEnv(),
            "controller",
            "--endpoint=unix:" + socket,
            "--region=us-east-1",
            "--http-endpoint=127.0.0.1:" + port)) {
      d.awaitSocket(Duration.ofSeconds(20));
      assertEquals(
          Set.of(
              Type.CONTROLLER_SERVICE.name(),
              Type.VOLUME_ACCESSIBILITY_CONSTRAINTS.name(),
              "VolumeExpansion.ONLINE"),
          capabilities(d));
      assertTrue(eventually(d, Duration.ofSeconds(10)), d.logText());

      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> health =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, health.statusCode(), health.body());
      HttpResponse<String> metrics =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, metrics.statusCode());
      assertTrue(metrics.body().contains("jvm_memory_used_bytes"), metrics.body());
      assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
    }
  }

  @Test
  void controllerWithoutARegionIsNotReadyAndSaysWhy(TestInfo info) throws Exception {
    Path socket = tmp.resolve("csi.sock");
    try (PackagedDriver d =
        PackagedDriver.start(
            socket,
            logFor(info),
            PackagedDriver.cleanEnv(),
            "controller",
            "--endpoint=unix://" + socket)) {
      d.awaitSocket(Duration.ofSeconds(20));
      Thread.sleep(500);
      assertFalse(probe(d));
      assertTrue(d.logText().contains("cannot determine the AWS region"), d.logText());
      assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
    }
  }

  /**
   * Go-driver style arguments serve controller and node in one process, without a command (as the
   * Go binary is run) and with README's {@code all}.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"", "all"})
  void goDriverStyleArgsWithoutACommandServeEverything(String command, TestInfo info)
      throws Exception {
    Path socket = tmp.resolve("csi.sock");
    Map<String, String> env = PackagedDriver.cleanEnv();
    env.put("AWS_REGION", "eu-west-1");
    env.put("CSI_NODE_NAME", "launcher-it-node");
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--endpoint=unix://" + socket,
                "--logtostderr",
                "--v=2",
                "--state-dir=" + tmp.resolve("state"),
                "--vol-metrics-opt-in=false",
                "--max-inflight-mount-calls-opt-in=true",
                "--max-inflight-mount-calls=10"));
    if (!command.isEmpty()) {
      args.addFirst(command);
    }
    try (PackagedDriver d =
        PackagedDriver.start(socket, logFor(info), env, args.toArray(String[]::new))) {
      d.awaitSocket(Duration.ofSeconds(20));
      assertTrue(capabilities(d).contains(Type.CONTROLLER_SERVICE.name()));
      assertTrue(eventually(d, Duration.ofSeconds(10)), d.logText());
      assertEquals(0, d.terminate(Duration.ofSeconds(30)), d.logText());
    }
  }

  @Test
  void badCommandLinesExitTwoWithoutListening(TestInfo info) throws Exception {
    Path socket = tmp.resolve("csi.sock");
    for (List<String> args :
        List.of(
            List.of("node", "--endpoint=unix://" + socket, "--no-such-flag"),
            List.of("controller", "--endpoint=unix://" + socket, "--v=loud"),
            List.of("nodes"))) {
      try (PackagedDriver d =
          PackagedDriver.start(
              socket, logFor(info), PackagedDriver.cleanEnv(), args.toArray(String[]::new))) {
        assertTrue(d.process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(2, d.process.exitValue(), d.logText());
        assertTrue(d.logText().startsWith("efs-csi: "), d.logText());
        assertFalse(Files.exists(socket));
      }
    }
  }

  /** flags.md: {@code --version} prints what {@code efs-csi version} prints, and exits 0. */
  @Test
  void theVersionFlagPrintsTheVersionCommandsJson() throws Exception {
    List<String> printed = new java.util.ArrayList<>();
    for (String arg : List.of("version", "--version")) {
      ProcessBuilder pb =
          new ProcessBuilder(PackagedDriver.distDir().resolve("bin/efs-csi").toString(), arg);
      pb.environment().clear();
      pb.environment().putAll(PackagedDriver.cleanEnv());
      Process p = pb.redirectError(ProcessBuilder.Redirect.DISCARD).start();
      String out =
          new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
      assertEquals(0, p.exitValue(), arg + ": " + out);
      printed.add(out);
    }
    assertTrue(printed.getFirst().strip().startsWith("{"), printed.getFirst());
    assertEquals(printed.getFirst(), printed.get(1));
  }

  /** The JVM's MaxHeapSize as bin/efs-csi starts it with this environment. */
  static long maxHeap(Map<String, String> extra) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(PackagedDriver.distDir().resolve("bin/efs-csi").toString(), "version")
            .redirectErrorStream(true);
    pb.environment().clear();
    pb.environment().putAll(PackagedDriver.cleanEnv());
    pb.environment().remove("EFS_CSI_MEMORY_LIMIT");
    pb.environment().remove("EFS_CSI_HEAP_PERCENT");
    pb.environment().remove("EFS_CSI_MAX_HEAP_MB");
    pb.environment().putAll(extra);
    pb.environment().put("EFS_CSI_JAVA_OPTS", "-XX:+PrintFlagsFinal");
    Process p = pb.start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    return out.lines()
        .filter(l -> l.matches("\\s*size_t MaxHeapSize\\s+=.*"))
        .map(l -> Long.parseLong(l.replaceAll(".*=\\s*(\\d+).*", "$1")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no MaxHeapSize in:\n" + out));
  }

  @Test
  void theHeapIsAShareOfTheContainersMemoryLimitWithACap() throws Exception {
    long mib = 1024 * 1024;
    // the chart's default limit, 320Mi, through the downward API: half of it
    assertEquals(160 * mib, maxHeap(Map.of("EFS_CSI_MEMORY_LIMIT", String.valueOf(320 * mib))));
    // no container limit: the downward API gives the node's allocatable memory; capped at 512 MiB
    assertEquals(512 * mib, maxHeap(Map.of("EFS_CSI_MEMORY_LIMIT", String.valueOf(64L << 30))));
    assertEquals(
        64 * mib,
        maxHeap(
            Map.of(
                "EFS_CSI_MEMORY_LIMIT", String.valueOf(256 * mib), "EFS_CSI_HEAP_PERCENT", "25")));
    assertEquals(
        200 * mib,
        maxHeap(
            Map.of(
                "EFS_CSI_MEMORY_LIMIT", String.valueOf(64L << 30), "EFS_CSI_MAX_HEAP_MB", "200")));
    // without the variable: at most the cap, whatever the machine has
    assertTrue(maxHeap(Map.of()) <= 512 * mib);
  }
}

package io.efscsi.it;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.IdentityGrpc;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged launcher ({@code dist/target/efs-csi/bin/efs-csi}) run as a separate process, as a
 * DaemonSet or Deployment container runs it, with a real gRPC client on its unix socket.
 */
final class PackagedDriver implements AutoCloseable {

  /**
   * The previous release's distribution (integration-tests/previous-release.properties): the
   * directory named by {@code EFSCSI_PREVIOUS_DIST} when set, else what {@code
   * scripts/previous-release} prints: built once per machine, by scripts/test beside the ITs, or
   * here; the script waits for a build under way (the wait, when there is one, is a row of the
   * run's time table). Never skipped: a missing previous release fails the test.
   */
  static Path previousDistDir() throws IOException, InterruptedException {
    String env = System.getenv("EFSCSI_PREVIOUS_DIST");
    if (env != null && !env.isBlank()) {
      return Path.of(env);
    }
    long t0 = System.nanoTime();
    Path repo = distDir().resolve("../../..").normalize();
    Process p =
        new ProcessBuilder(repo.resolve("scripts/previous-release").toString())
            .directory(repo.toFile())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
            .strip();
    if (p.waitFor() != 0 || out.isEmpty()) {
      throw new IllegalStateException(
          "scripts/previous-release failed (exit " + p.exitValue() + ")");
    }
    if (System.nanoTime() - t0 > java.util.concurrent.TimeUnit.SECONDS.toNanos(2)) {
      TestTimes.since("previous release, waited for", "integration tests", t0, "");
    }
    return Path.of(out);
  }

  static Path distDir() {
    String dir = System.getProperty("efscsi.dist.dir");
    if (dir == null) {
      throw new IllegalStateException("efscsi.dist.dir is not set: run through Maven failsafe");
    }
    Path p = Path.of(dir);
    if (!Files.isExecutable(p.resolve("bin/efs-csi"))) {
      throw new IllegalStateException(
          "no packaged launcher at " + p + ": run 'mvnw package' first");
    }
    return p;
  }

  /** Environment for the child: the machine's, minus AWS settings that would change behaviour. */
  static Map<String, String> cleanEnv() {
    Map<String, String> env = new java.util.HashMap<>(System.getenv());
    env.keySet().removeIf(k -> k.startsWith("AWS_"));
    // Never let a test reach for instance metadata (a non-loopback address).
    env.put("AWS_EC2_METADATA_DISABLED", "true");
    env.put("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9");
    return env;
  }

  final Process process;
  final Path socket;
  final Path log;
  private CsiChannels.Client client;

  private PackagedDriver(Process process, Path socket, Path log) {
    this.process = process;
    this.socket = socket;
    this.log = log;
  }

  static PackagedDriver start(Path socket, Path log, Map<String, String> env, String... args)
      throws IOException {
    return start(socket, log, env, List.of(), args);
  }

  /** As {@link #start(Path, Path, Map, String...)}, the launcher run through {@code wrapper}. */
  static PackagedDriver start(
      Path socket, Path log, Map<String, String> env, List<String> wrapper, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>(wrapper);
    cmd.add(distDir().resolve("bin/efs-csi").toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().clear();
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Files.createDirectories(log.getParent());
    pb.redirectOutput(log.toFile());
    return new PackagedDriver(pb.start(), socket, log);
  }

  /** Waits until the socket accepts connections; fails with the process log otherwise. */
  PackagedDriver awaitSocket(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError(
            "driver exited with " + process.exitValue() + " before listening:\n" + logText());
      }
      if (connectable(socket)) {
        return this;
      }
      Thread.sleep(10);
    }
    throw new AssertionError(
        "socket " + socket + " not ready after " + timeout + ":\n" + logText());
  }

  static boolean connectable(Path socket) {
    if (!Files.exists(socket)) {
      return false;
    }
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  IdentityGrpc.IdentityBlockingStub identity() {
    if (client == null) {
      client = CsiChannels.open(new Endpoint.Unix(socket));
    }
    return IdentityGrpc.newBlockingStub(client.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  io.efscsi.csi.v1.NodeGrpc.NodeBlockingStub node() {
    if (client == null) {
      client = CsiChannels.open(new Endpoint.Unix(socket));
    }
    return io.efscsi.csi.v1.NodeGrpc.newBlockingStub(client.channel())
        .withDeadlineAfter(60, TimeUnit.SECONDS);
  }

  /** Sends SIGTERM and returns the exit code. */
  int terminate(Duration timeout) throws Exception {
    closeClient();
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          "driver did not exit within " + timeout + " of SIGTERM:\n" + logText());
    }
    return process.exitValue();
  }

  String logText() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private void closeClient() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  @Override
  public void close() {
    closeClient();
    if (process.isAlive()) {
      process.destroyForcibly();
    }
  }
}

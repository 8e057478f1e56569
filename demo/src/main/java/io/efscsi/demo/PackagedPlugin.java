package io.efscsi.demo;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.emulator.EfsEmulator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A plugin of this distribution run as its own process through {@code bin/efs-csi}, as a node runs
 * it: for the controller benchmark and the build's AOT training, which must see the plugin's own
 * JVM and nothing of the process driving it.
 */
final class PackagedPlugin {

  private PackagedPlugin() {}

  /**
   * Starts {@code bin/efs-csi mode flags…} with this process's environment minus AWS settings, plus
   * {@code env}; its output goes to {@code log}.
   */
  static Process start(
      Path home, String mode, List<String> flags, Map<String, String> env, Path log)
      throws IOException {
    List<String> command = new ArrayList<>(List.of(home.resolve("bin/efs-csi").toString(), mode));
    command.addAll(flags);
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> all = new HashMap<>(System.getenv());
    all.keySet().removeIf(k -> k.startsWith("AWS_") || k.equals("EFS_CSI_JAVA_OPTS"));
    all.put("AWS_EC2_METADATA_DISABLED", "true");
    all.putAll(env);
    pb.environment().clear();
    pb.environment().putAll(all);
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    return pb.start();
  }

  /** A loopback port free now, for a plugin's {@code --http-endpoint}. */
  static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** The AWS settings that point the plugin's SDK clients at {@code efs}. */
  static Map<String, String> emulatorEnv(EfsEmulator efs) {
    return Map.of(
        "AWS_ENDPOINT_URL_EFS",
        efs.endpoint().toString(),
        "AWS_ENDPOINT_URL_STS",
        efs.endpoint().toString(),
        "AWS_ACCESS_KEY_ID",
        "AKIDEFSCSIBENCH",
        "AWS_SECRET_ACCESS_KEY",
        "bench-not-a-secret",
        "AWS_REGION",
        DemoDriver.REGION);
  }

  /** Waits (up to 30 s) until Probe answers ready; fails with the plugin's log if it exits. */
  static void awaitReady(CsiChannels.Client client, Process p, Path log) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException("the plugin exited: " + Files.readString(log));
      }
      try {
        if (IdentityGrpc.newBlockingStub(client.channel())
            .withDeadlineAfter(2, TimeUnit.SECONDS)
            .probe(ProbeRequest.getDefaultInstance())
            .getReady()
            .getValue()) {
          return;
        }
      } catch (RuntimeException notYet) {
        // socket not there yet
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException(
        "the plugin was not ready after 30 s: " + Files.readString(log));
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.ProcMountTable;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The packaged node plugin as the node ITs run it: started with its state, a stand-in NFS mount
 * command and a mount target port under a temporary directory, asked for its metrics and readiness,
 * and cleaned up after (mounts, proxies, files) whatever the test left.
 */
final class NodePlugins {

  private NodePlugins() {}

  /**
   * The packaged node plugin with its state in {@code tmp/state}, {@code tmp} as the kubelet's root
   * dir (staging and target paths must lie below it), the stand-in NFS mount command logging to
   * {@code tmp/nfs-mounts.log} and the mount targets at {@code mountTargetPort}; returns once Probe
   * is ready.
   */
  static PackagedDriver startPlugin(Path tmp, String name, String ports, int mountTargetPort)
      throws Exception {
    return startPlugin(
        tmp, name, ports, mountTargetPort, Map.of(), List.of(), List.of("--proxy-cgroup=none"));
  }

  /** The same, with {@code extraEnv} added to the plugin's environment. */
  static PackagedDriver startPlugin(
      Path tmp, String name, String ports, int mountTargetPort, Map<String, String> extraEnv)
      throws Exception {
    return startPlugin(
        tmp, name, ports, mountTargetPort, extraEnv, List.of(), List.of("--proxy-cgroup=none"));
  }

  /**
   * As {@link #startPlugin(Path, String, String, int, Map)}, with the launcher run through {@code
   * wrapper} (e.g. a shell that first enters a cgroup) and {@code flags} added (the cgroup flags).
   */
  static PackagedDriver startPlugin(
      Path tmp,
      String name,
      String ports,
      int mountTargetPort,
      Map<String, String> extraEnv,
      List<String> wrapper,
      List<String> flags)
      throws Exception {
    Path stateDir = tmp.resolve("state");
    Path fakeLog = tmp.resolve("nfs-mounts.log");
    Path script = tmp.resolve("fake-nfs-mount");
    if (!Files.exists(script)) {
      try (var in = NodePlugins.class.getResourceAsStream("/fake-nfs-mount")) {
        Files.write(script, in.readAllBytes());
      }
      Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Map<String, String> env = new HashMap<>(PackagedDriver.cleanEnv());
    env.put("FAKE_NFS_LOG", fakeLog.toString());
    env.put("CSI_NODE_NAME", "node-it-1");
    env.put("AWS_REGION", "us-east-1");
    env.putAll(extraEnv);
    Path socket = tmp.resolve("plugin/csi.sock");
    List<String> args = new ArrayList<>();
    args.add("node");
    args.add("--endpoint=unix://" + socket);
    args.add("--state-dir=" + stateDir);
    args.add("--kubelet-root-dir=" + tmp); // the tests' staging and target paths are below it
    args.add("--proxy-port-range=" + ports);
    args.add("--mount-absent-grace=1h");
    args.add("--vol-metrics-opt-in");
    args.add("--http-endpoint=127.0.0.1:0");
    args.add("--nfs-mount-command=" + script);
    args.add("--mount-target-port=" + mountTargetPort);
    args.addAll(flags);
    PackagedDriver d =
        PackagedDriver.start(
            socket,
            tmp.resolve("node-" + name.replaceAll("\\W", "") + "-" + System.nanoTime() + ".log"),
            env,
            wrapper,
            args.toArray(String[]::new));
    d.awaitSocket(Duration.ofSeconds(30));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!ready(d)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("node never ready:\n" + d.logText());
      }
      Thread.sleep(50);
    }
    return d;
  }

  /** The plugin's /metrics (its port from the log line of the HTTP server). */
  static String metrics(PackagedDriver d) throws Exception {
    var m =
        java.util.regex.Pattern.compile("health and metrics on http://127\\.0\\.0\\.1:(\\d+)")
            .matcher(d.logText());
    assertTrue(m.find(), "no metrics endpoint in the log");
    var http = java.net.http.HttpClient.newHttpClient();
    return http.send(
            java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + m.group(1) + "/metrics"))
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString())
        .body();
  }

  static boolean ready(PackagedDriver d) {
    try {
      return d.identity()
          .probe(io.efscsi.csi.v1.ProbeRequest.getDefaultInstance())
          .getReady()
          .getValue();
    } catch (StatusRuntimeException e) {
      return false; // still starting
    }
  }

  /**
   * Stops the plugin, then whatever a failed test left: unmounts everything under {@code tmp},
   * stops the proxies of {@code tmp/state}, deletes {@code tmp}.
   */
  static void cleanUp(PackagedDriver node, Path tmp) throws Exception {
    Path stateDir = tmp.resolve("state");
    if (node != null) {
      node.close();
    }
    List<MountInfo> left = mountsUnder(tmp);
    for (int i = left.size() - 1; i >= 0; i--) {
      new ProcessBuilder("umount", "-l", left.get(i).mountPoint()).start().waitFor();
    }
    Path proxies = stateDir.resolve("proxies");
    if (Files.isDirectory(proxies)) {
      try (Stream<Path> records = Files.list(proxies)) {
        for (Path r : records.filter(p -> p.toString().endsWith(".json")).toList()) {
          String json = Files.readString(r);
          long pid = Long.parseLong(json.replaceAll("(?s).*\"pid\": (\\d+).*", "$1"));
          ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
    }
    HostCleanup.deleteTree(tmp);
  }

  static List<MountInfo> mountsUnder(Path dir) throws Exception {
    String prefix = dir.toString() + "/";
    return new ProcMountTable(ProcMountTable.SELF)
        .read().stream().filter(m -> m.mountPoint().startsWith(prefix)).toList();
  }

  static VolumeCapability mountCap(VolumeCapability.AccessMode.Mode mode, String... flags) {
    return VolumeCapability.newBuilder()
        .setMount(VolumeCapability.MountVolume.newBuilder().addAllMountFlags(List.of(flags)))
        .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(mode))
        .build();
  }
}

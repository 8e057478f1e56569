package io.efscsi.it;

import io.efscsi.supervisor.host.MountInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What a node plugin under test has on the host (mounts under its tree, proxy state records, proxy
 * processes, listening ports of its range, proxy cgroups) against what its successful calls imply
 * ({@link Model}). Each staged volume's mount carries a marker file written right after its stage,
 * so a volume mounted again (or twice) shows as a missing marker.
 */
final class NodeFacts {

  /** What the successful calls so far imply: staged volumes, published (volume, pod) targets. */
  static final class Model {
    private final Set<Integer> staged = new TreeSet<>();
    private final Set<Long> published = new TreeSet<>();

    void apply(NodeCrashIT.Call c) {
      switch (c.kind()) {
        case STAGE -> staged.add(c.volume());
        case UNSTAGE -> staged.remove(c.volume());
        case PUBLISH -> published.add(key(c.volume(), c.pod()));
        case UNPUBLISH -> published.remove(key(c.volume(), c.pod()));
      }
    }

    /** Whether the call changes what the node should have (not a repeat, not a no-op). */
    boolean changedBy(NodeCrashIT.Call c) {
      return switch (c.kind()) {
        case STAGE -> !isStaged(c.volume());
        case UNSTAGE -> isStaged(c.volume());
        case PUBLISH -> !isPublished(c.volume(), c.pod());
        case UNPUBLISH -> isPublished(c.volume(), c.pod());
      };
    }

    static long key(int volume, int pod) {
      return (long) volume * NodeCrashIT.PODS + pod;
    }

    boolean isStaged(int v) {
      return staged.contains(v);
    }

    boolean isPublished(int v, int p) {
      return published.contains(key(v, p));
    }

    boolean anyPublished(int v) {
      for (int p = 0; p < NodeCrashIT.PODS; p++) {
        if (isPublished(v, p)) {
          return true;
        }
      }
      return false;
    }

    List<Integer> staged() {
      return List.copyOf(staged);
    }

    List<Long> published() {
      return List.copyOf(published);
    }
  }

  private final Path tmp;
  private final int portLower;
  private final int portUpper;
  private final String cgroupParent;
  private final Map<Integer, String> markers = new HashMap<>();

  NodeFacts(Path tmp, String ports, String cgroupParent) {
    this.tmp = tmp;
    String[] r = ports.split("-");
    this.portLower = Integer.parseInt(r[0]);
    this.portUpper = Integer.parseInt(r[1]);
    this.cgroupParent = cgroupParent;
  }

  static String volumeId(int v) {
    return String.format(Locale.ROOT, "fs-%08x", 0xc7a5_0000 + v);
  }

  Path staging(int v) {
    return staging(tmp, v);
  }

  Path target(int v, int pod) {
    return target(tmp, v, pod);
  }

  /** Where kubelet stages volume {@code v} under a test tree. */
  static Path staging(Path tree, int v) {
    return tree.resolve("kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/" + v + "/globalmount");
  }

  /** Where kubelet publishes volume {@code v} for pod {@code pod} under a test tree. */
  static Path target(Path tree, int v, int pod) {
    return tree.resolve(
        "kubelet/pods/pod-" + v + "-" + pod + "/volumes/kubernetes.io~csi/pv/mount");
  }

  /** After a successful stage of a volume not staged before: writes its marker into the mount. */
  void markIfNew(NodeCrashIT.Call call, Model model) throws IOException {
    if (call.kind() == NodeCrashIT.Kind.UNSTAGE) {
      markers.remove(call.volume());
    } else if (call.kind() == NodeCrashIT.Kind.STAGE && !markers.containsKey(call.volume())) {
      String marker = UUID.randomUUID().toString();
      Files.writeString(staging(call.volume()).resolve("marker"), marker);
      markers.put(call.volume(), marker);
    }
  }

  boolean isMounted(Path p) throws Exception {
    return NodePlugins.mountsUnder(tmp).stream().anyMatch(m -> m.mountPoint().equals(p.toString()));
  }

  /** How far a stage or unstage of a volume got: its proxy's record, its process, its mount. */
  String stagePhase(int v) throws Exception {
    String record = "";
    String proxy = "";
    for (Path r : records()) {
      String json = Files.readString(r);
      if (json.contains(volumeId(v) + "|")) {
        record = json.contains(staging(v).toString()) ? "record+user," : "record,";
        long pid = Long.parseLong(json.replaceAll("(?s).*\"pid\": (\\d+).*", "$1"));
        proxy = ProcessHandle.of(pid).isPresent() ? "proxy," : "";
      }
    }
    return record + proxy + (isMounted(staging(v)) ? "mounted" : "unmounted");
  }

  /** Waits up to {@code settle} for the host to match the model; fails with the differences. */
  void assertMatches(Model model, Duration settle, String context, Supplier<String> log)
      throws Exception {
    long deadline = System.nanoTime() + settle.toNanos();
    List<String> wrong = differences(model);
    while (!wrong.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(50);
      wrong = differences(model);
    }
    if (!wrong.isEmpty()) {
      throw new AssertionError(
          "after "
              + context
              + " (staged "
              + model.staged()
              + ", published "
              + model.published()
              + "): "
              + String.join("; ", wrong)
              + "\nplugin log:\n"
              + log.get());
    }
  }

  List<String> differences(Model model) throws Exception {
    List<String> wrong = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    for (int v : model.staged()) {
      expected.add(staging(v).toString());
    }
    for (long key : model.published()) {
      expected.add(
          target((int) (key / NodeCrashIT.PODS), (int) (key % NodeCrashIT.PODS)).toString());
    }
    List<String> mounted =
        NodePlugins.mountsUnder(tmp).stream().map(MountInfo::mountPoint).sorted().toList();
    if (!mounted.equals(expected.stream().sorted().toList())) {
      wrong.add("mounts " + mounted + " where " + expected.stream().sorted().toList());
    }
    for (int v : model.staged()) {
      check(wrong, staging(v).resolve("marker"), markers.get(v), "staging mount of volume " + v);
    }
    for (long key : model.published()) {
      int v = (int) (key / NodeCrashIT.PODS);
      check(
          wrong,
          target(v, (int) (key % NodeCrashIT.PODS)).resolve("marker"),
          markers.get(v),
          "target of volume " + v);
    }
    int n = model.staged().size();
    List<Path> records = records();
    if (records.size() != n) {
      wrong.add(records.size() + " proxy state records " + records + " for " + n + " staged");
    }
    List<Long> proxies = proxies();
    if (proxies.size() != n) {
      wrong.add(proxies.size() + " proxy processes " + proxies + " for " + n + " staged");
    }
    List<Integer> listening = listening();
    if (listening.size() != n) {
      wrong.add(listening.size() + " listening ports " + listening + " for " + n + " staged");
    }
    for (String controller : List.of("memory", "pids")) {
      List<String> groups = cgroups(controller);
      if (groups.size() != n) {
        wrong.add(
            groups.size() + " " + controller + " cgroups " + groups + " for " + n + " staged");
      }
    }
    return wrong;
  }

  private static void check(List<String> wrong, Path file, String expected, String what) {
    try {
      String found = Files.readString(file);
      if (!found.equals(expected)) {
        wrong.add(what + " holds marker " + found + ", not " + expected + " (mounted again)");
      }
    } catch (IOException e) {
      wrong.add(what + " has no marker " + expected + " (mounted again, or not its mount): " + e);
    }
  }

  List<Path> records() throws IOException {
    Path dir = tmp.resolve("state/proxies");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
  }

  /** Proxy processes of this test (their config files are under its tree). */
  List<Long> proxies() {
    String marker = tmp.toString();
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().commandLine().orElse("").contains("io.efscsi.proxy.ProxyMain"))
        .filter(p -> p.info().commandLine().orElse("").contains(marker))
        .map(ProcessHandle::pid)
        .sorted()
        .toList();
  }

  void killProxies() {
    for (long pid : proxies()) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  /** Loopback TCP ports of the proxy range in LISTEN state. */
  List<Integer> listening() throws IOException {
    Set<Integer> ports = new TreeSet<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      List<String> lines;
      try {
        lines = Files.readAllLines(Path.of(table));
      } catch (NoSuchFileException e) {
        continue;
      }
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.strip().split("\\s+");
        if (f.length > 3 && f[3].equals("0A")) {
          int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16);
          if (port >= portLower && port <= portUpper) {
            ports.add(port);
          }
        }
      }
    }
    return List.copyOf(ports);
  }

  List<String> cgroups(String controller) throws IOException {
    Path parent = Path.of("/sys/fs/cgroup", controller, cgroupParent);
    if (!Files.isDirectory(parent)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(parent)) {
      return s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}

package io.efscsi.supervisor.status;

import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.cgroup.CgroupDetector;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPresence;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.process.ControlClient;
import io.efscsi.supervisor.process.ProcProcessTable;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * What {@code efs-csi status} shows: every proxy of the state dir (its record, whether its process
 * lives, its control socket's answer, its cgroup's memory, its last exit, the mounts carrying its
 * port) and the loopback mounts whose port no proxy serves. Reads only: it never moves a record,
 * writes a file or signals a process. Every control socket is asked at once, each bounded by the
 * timeout, so a hundred proxies (or a hundred hung ones) answer within about that timeout.
 */
public final class StateView {

  /** One proxy as found. */
  public record Proxy(
      String id,
      String key,
      int port,
      long pid,
      boolean alive,
      String cgroup,
      long memoryCurrent,
      long memoryLimit,
      long memoryPeak,
      long restarts,
      long oomKills,
      Optional<String> lastExit,
      String upstream,
      String tls,
      String build,
      Set<String> users,
      Set<String> mounts,
      Map<String, Object> counters,
      Optional<String> error) {}

  /** A loopback NFS mount whose port no record of the state dir holds. */
  public record Orphan(int port, String mountPoint, String source) {}

  /** Everything. */
  public record Report(Path stateDir, List<Proxy> proxies, List<Orphan> mountsWithoutProxy) {}

  private final Path stateDir;
  private final Path cgroupRoot;
  private final MountTable mountTable;
  private final ProcessTable processes;
  private final Duration timeout;

  public StateView(
      Path stateDir,
      Path cgroupRoot,
      MountTable mountTable,
      ProcessTable processes,
      Duration timeout) {
    this.stateDir = stateDir;
    this.cgroupRoot = cgroupRoot;
    this.mountTable = mountTable;
    this.processes = processes;
    this.timeout = timeout;
  }

  /** The view of this host: its mount table and processes as {@code /proc} shows them. */
  public static StateView onThisHost(
      Path stateDir, Path cgroupRoot, Path mountinfo, Duration timeout) {
    return new StateView(
        stateDir, cgroupRoot, new ProcMountTable(mountinfo), new ProcProcessTable(), timeout);
  }

  public Report read() throws IOException {
    Path dir = stateDir.resolve("proxies");
    if (!Files.isDirectory(dir)) {
      throw new IOException(
          "no state dir at " + dir + " (is this the node plugin's container? see --state-dir)");
    }
    Map<Integer, List<MountInfo>> byPort = MountPresence.byPort(mountTable.read());
    List<CompletableFuture<Proxy>> asks = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
      for (Path f : files) {
        asks.add(CompletableFuture.supplyAsync(() -> proxy(f, byPort), Thread.ofVirtual()::start));
      }
    }
    List<Proxy> proxies = new ArrayList<>(asks.stream().map(CompletableFuture::join).toList());
    proxies.sort(Comparator.comparingInt(Proxy::port).thenComparing(Proxy::id));
    Set<Integer> held = new TreeSet<>();
    proxies.forEach(p -> held.add(p.port()));
    List<Orphan> orphans = new ArrayList<>();
    byPort.forEach((port, mounts) -> {
      if (!held.contains(port)) {
        mounts.forEach(m -> orphans.add(new Orphan(port, m.mountPoint(), m.source())));
      }
    });
    orphans.sort(Comparator.comparingInt(Orphan::port).thenComparing(Orphan::mountPoint));
    return new Report(stateDir, proxies, orphans);
  }

  private Proxy proxy(Path file, Map<Integer, List<MountInfo>> byPort) {
    String name = file.getFileName().toString();
    String id = name.substring(0, name.length() - ".json".length());
    ProxyRecord r;
    try {
      r = ProxyRecord.fromJson(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      return new Proxy(
          id,
          "?",
          0,
          0,
          false,
          "",
          -1,
          -1,
          -1,
          0,
          0,
          Optional.empty(),
          "",
          "",
          "",
          Set.of(),
          Set.of(),
          Map.of(),
          Optional.of("unreadable record " + file + ": " + e.getMessage()));
    }
    boolean alive = r.pid() > 0 && processes.alive(r.pid(), r.startTicks());
    Map<String, Object> counters = new LinkedHashMap<>();
    Optional<String> error = Optional.empty();
    if (alive) {
      try {
        if (Json.parse(ControlClient.ask(dir(file).resolve(id + ".sock"), "status", timeout))
            instanceof Map<?, ?> m) {
          m.forEach((k, v) -> counters.put(k.toString(), v));
        }
      } catch (IOException | IllegalArgumentException e) {
        error = Optional.of(e.getMessage());
      }
    }
    Placement cg = CgroupDetector.described(cgroupRoot, r.cgroup());
    Set<String> mounts = new TreeSet<>();
    byPort.getOrDefault(r.port(), List.of()).forEach(m -> mounts.add(m.mountPoint()));
    String upstream =
        counters.containsKey("upstream")
            ? counters.get("upstream").toString()
            : r.config().getOrDefault("upstream.host", "?")
                + ":"
                + r.config().getOrDefault("upstream.port", "?");
    String tls =
        counters.containsKey("tls")
            ? counters.get("tls").toString()
            : "true".equals(r.config().get("tls")) ? "on" : "off";
    return new Proxy(
        r.id(),
        r.key(),
        r.port(),
        r.pid(),
        alive,
        r.cgroup(),
        cg.memoryCurrent(),
        cg.memoryLimit(),
        cg.memoryPeak(),
        r.restarts(),
        Math.max(0, cg.oomKills()),
        lastExit(dir(file).resolve(id + ".exit")),
        upstream,
        tls,
        counters.get("build") instanceof String b && !b.isEmpty() ? b : r.proxyBuild(),
        r.users(),
        mounts,
        counters,
        error);
  }

  private static Path dir(Path file) {
    return file.getParent();
  }

  private static Optional<String> lastExit(Path file) {
    try {
      String line = Files.readString(file, StandardCharsets.UTF_8).strip();
      int space = line.indexOf(' ');
      if (space < 0) {
        return Optional.empty();
      }
      String when =
          java.time.Instant.ofEpochMilli(Long.parseLong(line.substring(0, space))).toString();
      return Optional.of(line.substring(space + 1) + " at " + when);
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }
}

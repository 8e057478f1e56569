package io.efscsi.node.status;

import io.efscsi.node.metrics.VolumeMetrics;
import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.status.StateView;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code efs-csi status [--json] [--state-dir DIR] [--proxy-cgroup-root DIR] [--mountinfo FILE]
 * [--timeout-ms N]} (defaults: {@code $EFS_CSI_STATE_DIR}, which the chart sets to the node's state
 * dir, else {@code /var/run/efs-csi}, {@code /host/sys/fs/cgroup} when present, else {@code
 * /sys/fs/cgroup}, {@code /proc/self/mountinfo}, 500 ms): the node's volumes and proxies, as a
 * table or as JSON. Run inside the node pod ({@code kubectl exec … -- efs-csi status}). Exit codes:
 * 0 shown, 1 cannot read, 2 bad flags.
 */
public final class StatusCommand {

  private static final List<String> FLAGS =
      List.of("--state-dir", "--proxy-cgroup-root", "--mountinfo", "--timeout-ms");

  private StatusCommand() {}

  /** Where the node pod's state dir is when no flag says (the chart sets it to its value). */
  public static final String STATE_DIR_ENV = "EFS_CSI_STATE_DIR";

  public static int run(List<String> args, PrintStream out, PrintStream err) {
    return run(args, System.getenv(), out, err);
  }

  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    boolean json = false;
    String fromEnv = env.getOrDefault(STATE_DIR_ENV, "");
    Path state = Path.of(fromEnv.isBlank() ? "/var/run/efs-csi" : fromEnv);
    // the chart mounts the host's cgroupfs here (the container's own /sys/fs/cgroup is its subtree)
    Path cgroupRoot =
        java.nio.file.Files.isDirectory(Path.of("/host/sys/fs/cgroup"))
            ? Path.of("/host/sys/fs/cgroup")
            : Path.of("/sys/fs/cgroup");
    Path mountinfo = ProcMountTable.SELF;
    long timeoutMs = 500;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String flag = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
      String value = a.contains("=") ? a.substring(a.indexOf('=') + 1) : null;
      if (flag.equals("--json")) {
        json = true;
        continue;
      }
      if (!FLAGS.contains(flag)) {
        err.println(
            "efs-csi status: unknown flag '"
                + flag
                + "'; accepted: --json, "
                + String.join(", ", FLAGS));
        return 2;
      }
      if (value == null) {
        if (i + 1 >= args.size()) {
          err.println("efs-csi status: flag " + flag + " needs a value");
          return 2;
        }
        value = args.get(++i);
      }
      switch (flag) {
        case "--state-dir" -> state = Path.of(value);
        case "--proxy-cgroup-root" -> cgroupRoot = Path.of(value);
        case "--mountinfo" -> mountinfo = Path.of(value);
        case "--timeout-ms" -> {
          try {
            timeoutMs = Long.parseLong(value);
          } catch (NumberFormatException e) {
            timeoutMs = -1;
          }
          if (timeoutMs < 1 || timeoutMs > 60_000) {
            err.println("efs-csi status: --timeout-ms must be 1-60000, got '" + value + "'");
            return 2;
          }
        }
        default -> throw new IllegalStateException(flag);
      }
    }
    StateView.Report report;
    try {
      report =
          StateView.onThisHost(state, cgroupRoot, mountinfo, Duration.ofMillis(timeoutMs)).read();
    } catch (Exception e) {
      err.println("efs-csi status: " + e.getMessage());
      return 1;
    }
    out.print(json ? json(report) + "\n" : table(report));
    out.flush();
    return 0;
  }

  /** The JSON form: stable field names for scripts (docs/troubleshooting.md). */
  static String json(StateView.Report r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("stateDir", r.stateDir().toString());
    List<Object> proxies = new ArrayList<>();
    for (StateView.Proxy p : r.proxies()) {
      Map<String, Object> e = new LinkedHashMap<>();
      e.put("id", p.id());
      e.put("volume", VolumeMetrics.volume(p.key()));
      e.put("key", p.key());
      e.put("port", (long) p.port());
      e.put("pid", p.pid());
      e.put("running", p.alive());
      e.put("cgroup", p.cgroup());
      e.put("memoryBytes", p.memoryCurrent());
      e.put("memoryLimitBytes", p.memoryLimit());
      e.put("memoryPeakBytes", p.memoryPeak());
      e.put("restarts", p.restarts());
      e.put("oomKills", p.oomKills());
      e.put("lastExit", p.lastExit().orElse(null));
      e.put("upstream", p.upstream());
      e.put("tls", p.tls());
      e.put("build", p.build());
      e.put("users", new ArrayList<Object>(p.users()));
      e.put("mounts", new ArrayList<Object>(p.mounts()));
      e.put("proxy", new LinkedHashMap<String, Object>(p.counters()));
      e.put("error", p.error().orElse(null));
      proxies.add(e);
    }
    m.put("proxies", proxies);
    List<Object> orphans = new ArrayList<>();
    for (StateView.Orphan o : r.mountsWithoutProxy()) {
      Map<String, Object> e = new LinkedHashMap<>();
      e.put("port", (long) o.port());
      e.put("mountPoint", o.mountPoint());
      e.put("source", o.source());
      orphans.add(e);
    }
    m.put("mountsWithoutProxy", orphans);
    return Json.write(m);
  }

  /** The table: one line per proxy, its users and mounts indented below it. */
  static String table(StateView.Report r) {
    StringBuilder sb = new StringBuilder();
    String fmt = "%-6s %-28s %-8s %-8s %-9s %-9s %-8s %-4s %-21s %-6s %s%n";
    sb.append(
        String.format(
            Locale.ROOT,
            fmt,
            "PORT",
            "VOLUME",
            "PID",
            "STATE",
            "MEMORY",
            "LIMIT",
            "RESTARTS",
            "OOM",
            "UPSTREAM",
            "TLS",
            "CGROUP"));
    for (StateView.Proxy p : r.proxies()) {
      sb.append(
          String.format(
              Locale.ROOT,
              fmt,
              p.port(),
              VolumeMetrics.volume(p.key()),
              p.pid(),
              p.error().isPresent() && !p.alive() ? "error" : p.alive() ? "running" : "down",
              bytes(p.memoryCurrent()),
              bytes(p.memoryLimit()),
              p.restarts(),
              p.oomKills(),
              p.upstream(),
              p.tls(),
              p.cgroup().isEmpty() ? "-" : p.cgroup()));
      if (!p.build().isEmpty()) {
        sb.append("       build: ").append(p.build()).append('\n');
      }
      p.lastExit().ifPresent(x -> sb.append("       last exit: ").append(x).append('\n'));
      p.error().ifPresent(x -> sb.append("       error: ").append(x).append('\n'));
      p.users().forEach(u -> sb.append("       user:  ").append(u).append('\n'));
      p.mounts().forEach(u -> sb.append("       mount: ").append(u).append('\n'));
    }
    if (r.proxies().isEmpty()) {
      sb.append("(no proxies in ").append(r.stateDir()).append(")\n");
    }
    if (!r.mountsWithoutProxy().isEmpty()) {
      sb.append(
          "\nMOUNTS WITHOUT A PROXY (the reconciler unmounts them lazily when nobody uses them)\n");
      for (StateView.Orphan o : r.mountsWithoutProxy()) {
        sb.append(
            String.format(Locale.ROOT, "%-6d %s (%s)%n", o.port(), o.mountPoint(), o.source()));
      }
    }
    return sb.toString();
  }

  private static String bytes(long n) {
    if (n < 0) {
      return "-";
    }
    if (n < 1024 * 1024) {
      return (n / 1024) + "Ki";
    }
    return String.format(Locale.ROOT, "%.1fMi", n / 1048576.0);
  }
}

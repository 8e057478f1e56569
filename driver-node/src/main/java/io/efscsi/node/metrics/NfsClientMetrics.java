package io.efscsi.node.metrics;

import io.efscsi.node.mountstats.MountStats;
import io.efscsi.supervisor.ProxyStatus;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel NFS client's own figures for each volume ({@code efs_csi_nfs_*}): requests, errors,
 * round-trip and execution times per operation, bytes, retransmissions, major timeouts and
 * reconnects, read from {@code /proc/self/mountstats}. With one NFS mount per volume per node, the
 * kernel's per-mount numbers are exactly per volume: the mounts are matched to volumes by the proxy
 * port in their options, and the staging mount and its bind mounts (one superblock) count once.
 *
 * <p>Labels: {@code volume} and {@code port} as in {@link VolumeMetrics}, {@code pv} (the
 * PersistentVolume's name once a pod's bind mount shows it, "" until then) and {@code op}.
 * Cardinality is bounded: operations outside {@link #OPS} are summed as {@code OTHER}, and an
 * operation's series appear only once the volume has made such a request.
 */
public final class NfsClientMetrics {

  private static final Logger LOG = LoggerFactory.getLogger(NfsClientMetrics.class);

  /** The operations with series of their own (NFSv4 and v3 names); the rest count as OTHER. */
  public static final Set<String> OPS =
      Set.of(
          "READ",
          "WRITE",
          "COMMIT",
          "OPEN",
          "CLOSE",
          "GETATTR",
          "SETATTR",
          "LOOKUP",
          "ACCESS",
          "READDIR",
          "READDIRPLUS",
          "CREATE",
          "REMOVE",
          "RENAME",
          "LOCK");

  static final String OTHER = "OTHER";

  /** A pod's bind mount: {@code <kubelet>/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount}. */
  private static final Pattern PUBLISHED =
      Pattern.compile("/pods/[^/]+/volumes/kubernetes\\.io~csi/([^/]+)/mount$");

  /** Where the numbers come from. */
  public interface Source {
    /** The node's proxies (which port serves which volume). */
    List<ProxyStatus> status();

    /** The mountstats text. */
    BufferedReader mountstats() throws IOException;

    /** The supervisor's proxies and this process's {@code /proc/self/mountstats}. */
    static Source of(Supplier<List<ProxyStatus>> status) {
      return of(status, Path.of("/proc/self/mountstats"));
    }

    static Source of(Supplier<List<ProxyStatus>> status, Path file) {
      return new Source() {
        @Override
        public List<ProxyStatus> status() {
          return status.get();
        }

        @Override
        public BufferedReader mountstats() throws IOException {
          return Files.newBufferedReader(file, StandardCharsets.ISO_8859_1);
        }
      };
    }
  }

  /** One volume's latest numbers; its meters read them. */
  private static final class Row {
    final String key;
    final int port;
    final String pv;
    volatile MountStats.Mount mount;
    volatile Map<String, MountStats.Op> ops = Map.of();
    final Map<String, List<Meter>> opMeters = new HashMap<>();
    final List<Meter> meters = new ArrayList<>();

    Row(String key, int port, String pv) {
      this.key = key;
      this.port = port;
      this.pv = pv;
    }

    Tags tags() {
      return Tags.of("volume", VolumeMetrics.volume(key), "pv", pv, "port", Integer.toString(port));
    }
  }

  private final Source source;
  private final MeterRegistry registry;
  private final Map<Integer, Row> rows = new HashMap<>();
  private List<String> lastRefused = List.of();

  public NfsClientMetrics(Source source, MeterRegistry registry) {
    this.source = source;
    this.registry = registry;
  }

  /** One refresh: volumes with a mount get series, their numbers follow, gone ones lose them. */
  public synchronized void refresh() {
    Map<Integer, String> keys = new HashMap<>();
    for (ProxyStatus s : source.status()) {
      keys.put(s.port(), s.key());
    }
    MountStats.Result read;
    try (BufferedReader in = source.mountstats()) {
      read =
          MountStats.read(in, m -> m.port().filter(keys::containsKey).isPresent() && loopback(m));
    } catch (IOException e) {
      LOG.debug("cannot read mountstats: {}", e.toString());
      return;
    }
    if (!read.refused().equals(lastRefused)) {
      read.refused().forEach(r -> LOG.warn("mountstats: left out {}", r));
      lastRefused = read.refused();
    }
    Map<Integer, MountStats.Mount> byPort = new LinkedHashMap<>();
    Map<Integer, String> pvs = new HashMap<>();
    for (MountStats.Mount m : read.mounts()) {
      int port = m.port().orElseThrow();
      // the staging mount and its bind mounts share one superblock: the same numbers, once
      byPort.merge(port, m, (a, b) -> requests(b) > requests(a) ? b : a);
      Matcher pv = PUBLISHED.matcher(m.mountPoint());
      if (pv.find()) {
        pvs.putIfAbsent(port, pv.group(1));
      }
    }
    Map<Integer, Row> seen = new HashMap<>();
    byPort.forEach((port, mount) -> {
      Row row = rows.remove(port);
      String key = keys.get(port);
      String pv = pvs.getOrDefault(port, row != null && row.key.equals(key) ? row.pv : "");
      if (row != null && (!row.key.equals(key) || !row.pv.equals(pv))) {
        remove(row);
        row = null;
      }
      if (row == null) {
        row = new Row(key, port, pv);
        row.mount = mount;
        register(row);
      }
      row.mount = mount;
      row.ops = grouped(mount);
      registerOps(row);
      seen.put(port, row);
    });
    rows.values().forEach(this::remove);
    rows.clear();
    rows.putAll(seen);
  }

  private static boolean loopback(MountStats.Mount m) {
    String addr = m.options().get("addr");
    return "127.0.0.1".equals(addr) || m.device().startsWith("127.0.0.1:");
  }

  private static double requests(MountStats.Mount m) {
    return m.ops().values().stream().mapToDouble(MountStats.Op::ops).sum();
  }

  /** The listed operations as they are, every other one summed into OTHER. */
  static Map<String, MountStats.Op> grouped(MountStats.Mount m) {
    Map<String, MountStats.Op> out = new HashMap<>();
    double[] other = new double[9];
    boolean errors = true;
    for (Map.Entry<String, MountStats.Op> e : m.ops().entrySet()) {
      MountStats.Op op = e.getValue();
      if (OPS.contains(e.getKey())) {
        out.put(e.getKey(), op);
        continue;
      }
      other[0] += op.ops();
      other[1] += op.transmissions();
      other[2] += op.majorTimeouts();
      other[3] += op.bytesSent();
      other[4] += op.bytesReceived();
      other[5] += op.queueMillis();
      other[6] += op.rttMillis();
      other[7] += op.executeMillis();
      other[8] += Math.max(0, op.errors());
      errors &= op.errors() >= 0;
    }
    out.put(
        OTHER,
        new MountStats.Op(
            other[0],
            other[1],
            other[2],
            other[3],
            other[4],
            other[5],
            other[6],
            other[7],
            errors ? other[8] : -1));
    return out;
  }

  private void register(Row row) {
    Tags t = row.tags();
    counter(
        row.meters,
        row,
        t,
        "efs_csi_nfs_read_bytes",
        "bytes the NFS client read from the" + " server",
        r -> r.mount.bytes().serverRead());
    counter(
        row.meters,
        row,
        t,
        "efs_csi_nfs_write_bytes",
        "bytes the NFS client wrote to the" + " server",
        r -> r.mount.bytes().serverWrite());
    counter(
        row.meters,
        row,
        t,
        "efs_csi_nfs_retransmissions",
        "requests the NFS client sent again" + " after no reply came in time",
        r -> sum(r, MountStats.Op::retransmissions));
    counter(
        row.meters,
        row,
        t,
        "efs_csi_nfs_major_timeouts",
        "requests that reached the mount's" + " major timeout (a soft mount's request then fails)",
        r -> sum(r, MountStats.Op::majorTimeouts));
    counter(
        row.meters,
        row,
        t,
        "efs_csi_nfs_connects",
        "TCP connections the NFS client opened to" + " the proxy",
        r -> Math.max(0, r.mount.connects()));
  }

  /** Series of an operation appear once the volume made such a request; they stay. */
  private void registerOps(Row row) {
    row.ops.forEach((name, op) -> {
      if (op.ops() <= 0 || row.opMeters.containsKey(name)) {
        return;
      }
      List<Meter> meters = new ArrayList<>();
      Tags t = row.tags().and("op", name);
      meters.add(
          FunctionTimer.builder(
                  "efs_csi_nfs_request_rtt",
                  row,
                  r -> (long) opOf(r, name).ops(),
                  r -> opOf(r, name).rttMillis(),
                  TimeUnit.MILLISECONDS)
              .description("requests and their summed round-trip time (sent to reply received)")
              .tags(t)
              .register(registry));
      meters.add(
          FunctionTimer.builder(
                  "efs_csi_nfs_request_execute",
                  row,
                  r -> (long) opOf(r, name).ops(),
                  r -> opOf(r, name).executeMillis(),
                  TimeUnit.MILLISECONDS)
              .description("requests and their summed execution time (queued to done)")
              .tags(t)
              .register(registry));
      if (op.errors() >= 0) {
        counter(
            meters,
            row,
            t,
            "efs_csi_nfs_request_errors",
            "requests that ended in an error",
            r -> Math.max(0, opOf(r, name).errors()));
      }
      row.opMeters.put(name, meters);
    });
  }

  private static MountStats.Op opOf(Row r, String name) {
    MountStats.Op op = r.ops.get(name);
    return op != null ? op : new MountStats.Op(0, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  private static double sum(Row r, ToDoubleFunction<MountStats.Op> f) {
    return r.mount.ops().values().stream().mapToDouble(f).sum();
  }

  private void counter(
      List<Meter> into, Row row, Tags tags, String name, String help, ToDoubleFunction<Row> f) {
    into.add(FunctionCounter.builder(name, row, f).description(help).tags(tags).register(registry));
  }

  private void remove(Row row) {
    row.meters.forEach(registry::remove);
    row.opMeters.values().forEach(ms -> ms.forEach(registry::remove));
    row.meters.clear();
    row.opMeters.clear();
  }
}

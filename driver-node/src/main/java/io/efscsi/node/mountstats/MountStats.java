package io.efscsi.node.mountstats;

import io.efscsi.supervisor.host.MountInfoParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the kernel's per-mount NFS client statistics ({@code /proc/self/mountstats}, written by
 * fs/nfs's {@code nfs_show_stats} and sunrpc's {@code rpc_clnt_show_stats}): one block per mount,
 * opened by a {@code device … mounted on … with fstype …} line, then tab-indented lines of which
 * this reader keeps {@code opts:}, {@code bytes:}, the {@code xprt:} line of a TCP transport and
 * the per-operation lines.
 *
 * <p>Every number the kernel prints is unsigned; they are read as such (a value past 2^63 stays
 * positive as a double). A block whose lines this reader keeps are malformed is left out, with the
 * reason in {@link Result#refused()}; other lines are skipped, so a kernel that adds lines or
 * fields is still read. Bounds: {@link #MAX_OPS} operations per mount and {@link #MAX_MOUNTS}
 * accepted mounts, so any input is read in bounded memory.
 */
public final class MountStats {

  /** More operations than any NFS version has (NFSv4.2 has about 70). */
  public static final int MAX_OPS = 128;

  /** Accepted mounts kept per read (the rest counted in {@link Result#dropped()}). */
  public static final int MAX_MOUNTS = 4096;

  /** The kernel's {@code bytes:} counters, in the order it prints them. */
  public record Bytes(
      double normalRead,
      double normalWrite,
      double directRead,
      double directWrite,
      double serverRead,
      double serverWrite,
      double readPages,
      double writePages) {
    static final Bytes NONE = new Bytes(0, 0, 0, 0, 0, 0, 0, 0);
  }

  /**
   * One operation's line: {@code ops trans timeouts bytes_sent bytes_recv queue rtt execute
   * [errors]}, times in milliseconds summed over every request.
   *
   * @param errors requests that ended in an error, or -1 before kernel 5.3 (which did not count
   *     them)
   */
  public record Op(
      double ops,
      double transmissions,
      double majorTimeouts,
      double bytesSent,
      double bytesReceived,
      double queueMillis,
      double rttMillis,
      double executeMillis,
      double errors) {

    /** Requests sent again after no reply came: transmissions beyond the first of each. */
    public double retransmissions() {
      return Math.max(0, transmissions - ops);
    }
  }

  /**
   * One mount's block.
   *
   * @param device as the kernel prints it ({@code 127.0.0.1:/}), octal escapes undone
   * @param mountPoint where it is mounted, octal escapes undone
   * @param fsType {@code nfs} or {@code nfs4}
   * @param options the {@code opts:} line, each {@code key=value} (a flag maps to "")
   * @param bytes the {@code bytes:} line, zeros when absent
   * @param connects the TCP transport's connect count, -1 when the mount has no TCP transport
   * @param ops every per-operation line, in the kernel's order
   */
  public record Mount(
      String device,
      String mountPoint,
      String fsType,
      Map<String, String> options,
      Bytes bytes,
      double connects,
      Map<String, Op> ops) {

    /** The {@code port=} option, when it is a port. */
    public Optional<Integer> port() {
      String p = options.get("port");
      if (p == null || !p.matches("[0-9]{1,5}")) {
        return Optional.empty();
      }
      int n = Integer.parseInt(p);
      return n > 0 && n < 65536 ? Optional.of(n) : Optional.empty();
    }
  }

  /**
   * What a read found.
   *
   * @param mounts the NFS mounts the filter accepted
   * @param refused NFS blocks left out, each with the reason (the first few)
   * @param dropped accepted mounts past {@link #MAX_MOUNTS}
   */
  public record Result(List<Mount> mounts, List<String> refused, int dropped) {}

  private static final Pattern DEVICE =
      Pattern.compile(
          "device ([^ ]+) mounted on ([^ ]+) with fstype ([^ ]+)(?: statvers=([^ ]+))?");
  private static final Pattern OP_LINE = Pattern.compile("([A-Z][A-Z0-9_]*):[ \\t]+(.*)");
  private static final int MAX_REFUSED = 16;

  /** Longer than any line the kernel writes here (a mount point is at most 4096 bytes, escaped). */
  static final int MAX_LINE = 64 * 1024;

  private static final String CUT = " \u0000cut";

  private MountStats() {}

  /** Reads every NFS mount's block; {@code accept} picks which mounts are kept. */
  public static Result read(BufferedReader in, Predicate<Mount> accept) throws IOException {
    List<Mount> mounts = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    int dropped = 0;
    Block block = null;
    StringBuilder buf = new StringBuilder();
    String line;
    while ((line = nextLine(in, buf)) != null) {
      if (line.startsWith("device ")) {
        dropped += finish(block, accept, mounts, refused);
        block = Block.open(line);
      } else if (block != null) {
        block.line(line);
      }
    }
    dropped += finish(block, accept, mounts, refused);
    return new Result(List.copyOf(mounts), List.copyOf(refused), dropped);
  }

  /**
   * The next line ending in a newline only (a mount point may hold a carriage return, which the
   * kernel does not escape), at most {@link #MAX_LINE} characters of it: a longer line reads as its
   * start followed by {@link #CUT}, which no reader here accepts.
   */
  private static String nextLine(BufferedReader in, StringBuilder buf) throws IOException {
    buf.setLength(0);
    int c;
    boolean cut = false;
    while ((c = in.read()) >= 0 && c != '\n') {
      if (buf.length() < MAX_LINE) {
        buf.append((char) c);
      } else {
        cut = true;
      }
    }
    if (c < 0 && buf.isEmpty()) {
      return null;
    }
    return cut ? buf + CUT : buf.toString();
  }

  /** Reads a whole text (tests and fuzzing). */
  public static Result read(String text, Predicate<Mount> accept) {
    try {
      return read(new BufferedReader(new java.io.StringReader(text)), accept);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static int finish(
      Block block, Predicate<Mount> accept, List<Mount> mounts, List<String> refused) {
    if (block == null || !block.nfs) {
      return 0;
    }
    if (block.problem != null) {
      if (refused.size() < MAX_REFUSED) {
        refused.add(block.where() + ": " + block.problem);
      }
      return 0;
    }
    Mount m = block.mount();
    if (!accept.test(m)) {
      return 0;
    }
    if (mounts.size() >= MAX_MOUNTS) {
      return 1;
    }
    mounts.add(m);
    return 0;
  }

  /** The block being read. */
  private static final class Block {
    final String device;
    final String mountPoint;
    final String fsType;
    final boolean nfs;
    Map<String, String> options = Map.of();
    Bytes bytes = Bytes.NONE;
    double connects = -1;
    final Map<String, Op> ops = new LinkedHashMap<>();
    boolean inOps;
    String problem;

    private Block(String device, String mountPoint, String fsType, String problem) {
      this.device = device;
      this.mountPoint = mountPoint;
      this.fsType = fsType;
      this.nfs = fsType.equals("nfs") || fsType.equals("nfs4");
      this.problem = problem;
    }

    static Block open(String line) {
      Matcher m = DEVICE.matcher(line);
      if (!m.matches()) {
        // an NFS block the reader cannot place is still an NFS block: say so rather than lose it
        boolean nfs = line.contains(" with fstype nfs");
        return new Block(
            line, "?", nfs ? "nfs" : "?", nfs ? "the device line does not read" : null);
      }
      return new Block(
          MountInfoParser.unescape(m.group(1)),
          MountInfoParser.unescape(m.group(2)),
          m.group(3),
          null);
    }

    String where() {
      return mountPoint.equals("?") ? "a block" : "the mount on " + mountPoint;
    }

    void line(String raw) {
      if (!nfs || problem != null) {
        return;
      }
      String line = raw.strip();
      if (line.startsWith("opts:")) {
        options = options(line.substring(5).strip());
      } else if (line.startsWith("bytes:")) {
        long[] n = numbers(line.substring(6), "bytes: line");
        if (n != null && n.length < 8) {
          problem = "its bytes: line has " + n.length + " numbers, not 8";
        } else if (n != null) {
          bytes = new Bytes(u(n[0]), u(n[1]), u(n[2]), u(n[3]), u(n[4]), u(n[5]), u(n[6]), u(n[7]));
        }
      } else if (line.startsWith("xprt:")) {
        xprt(line.substring(5).strip());
      } else if (line.equals("per-op statistics")) {
        inOps = true;
      } else if (inOps && !line.isEmpty()) {
        op(line);
      }
    }

    private void xprt(String rest) {
      if (!rest.startsWith("tcp ")) {
        return; // udp and rdma print other fields; only TCP reaches the proxies
      }
      long[] n = numbers(rest.substring(4), "xprt: tcp line");
      if (n != null && n.length < 3) {
        problem = "its xprt: tcp line has " + n.length + " numbers, fewer than 3";
      } else if (n != null) {
        connects = u(n[2]); // srcport, bind count, connect count, …
      }
    }

    private void op(String line) {
      Matcher m = OP_LINE.matcher(line);
      if (!m.matches()) {
        return; // not an operation line (a newer kernel's addition): skipped
      }
      long[] n = numbers(m.group(2), m.group(1) + " line");
      if (n == null) {
        return;
      }
      if (n.length < 8) {
        problem = "its " + m.group(1) + " line has " + n.length + " numbers, fewer than 8";
        return;
      }
      if (ops.size() >= MAX_OPS && !ops.containsKey(m.group(1))) {
        problem = "it has more than " + MAX_OPS + " operations";
        return;
      }
      ops.put(
          m.group(1),
          new Op(
              u(n[0]),
              u(n[1]),
              u(n[2]),
              u(n[3]),
              u(n[4]),
              u(n[5]),
              u(n[6]),
              u(n[7]),
              n.length > 8 ? u(n[8]) : -1));
    }

    /** The numbers of a line, or null (and the problem set) when one is not an unsigned 64-bit. */
    private long[] numbers(String s, String what) {
      String t = s.strip();
      if (t.isEmpty()) {
        return new long[0];
      }
      String[] parts = t.split("[ \t]+");
      long[] out = new long[parts.length];
      for (int i = 0; i < parts.length; i++) {
        try {
          if (!parts[i].matches("[0-9]{1,20}")) {
            throw new NumberFormatException();
          }
          out[i] = Long.parseUnsignedLong(parts[i]);
        } catch (NumberFormatException e) {
          problem = "its " + what + " holds " + quote(parts[i]) + ", not an unsigned number";
          return null;
        }
      }
      return out;
    }

    Mount mount() {
      return new Mount(
          device,
          mountPoint,
          fsType,
          options,
          bytes,
          connects,
          java.util.Collections.unmodifiableMap(ops));
    }
  }

  private static Map<String, String> options(String s) {
    Map<String, String> out = new HashMap<>();
    for (String o : s.split(",")) {
      if (o.isEmpty()) {
        continue;
      }
      int eq = o.indexOf('=');
      out.putIfAbsent(eq < 0 ? o : o.substring(0, eq), eq < 0 ? "" : o.substring(eq + 1));
    }
    return Map.copyOf(out);
  }

  /** An unsigned 64-bit value as a double (exact below 2^53, rounded past it). */
  static double u(long v) {
    return v >= 0 ? v : (v >>> 1) * 2.0 + (v & 1);
  }

  private static String quote(String s) {
    String cut = s.length() > 40 ? s.substring(0, 40) + "…" : s;
    return "\"" + cut + "\"";
  }
}

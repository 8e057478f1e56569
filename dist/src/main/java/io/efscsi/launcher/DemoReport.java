package io.efscsi.launcher;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the demo tells: a narrative of steps with aligned fields (unless quiet), then the summary
 * table, or the summary as JSON.
 */
final class DemoReport {

  /** One step's measurements; -1 where a figure does not apply. */
  record Step(String name, long millis, long bytes, long proxyRss, long restarts, String note) {}

  /** What the Go driver (efs-utils) does when its proxy dies, as the seeds describe it. */
  static final String GO_DRIVER_AT_HEAL =
      "the Go driver (efs-utils) here: the mount hangs, and a fresh proxy is started on a new port";

  private final PrintStream narrative;
  private final List<Step> steps = new ArrayList<>();
  private int count;
  private String heal = "";

  /** The heal's facts, for the JSON summary. */
  void heal(int portBefore, int portAfter, long killToServingMillis, boolean byteExact) {
    heal =
        ",\"heal\":{\"portBefore\":%d,\"portAfter\":%d,\"samePort\":%b,\"killToServingMillis\":%d,\"byteExact\":%b}"
            .formatted(
                portBefore, portAfter, portBefore == portAfter, killToServingMillis, byteExact);
  }

  /**
   * @param narrative where the step-by-step story goes (a null stream when quiet or JSON)
   */
  DemoReport(PrintStream narrative) {
    this.narrative = narrative;
  }

  void line(String text) {
    narrative.println(text);
  }

  /** A step's heading with its duration; its fields follow. */
  Step step(String name, long nanos, long bytes, long proxyRss, long restarts, String note) {
    Step s = new Step(name, nanos / 1_000_000, bytes, proxyRss, restarts, note);
    steps.add(s);
    count++;
    String head = String.format(Locale.ROOT, "[%2d] %s", count, name);
    narrative.printf(Locale.ROOT, "%-62s %7d ms%n", head, s.millis());
    return s;
  }

  /** One aligned field under a step. */
  void field(String label, Object value) {
    narrative.printf(Locale.ROOT, "     %-16s %s%n", label, value);
  }

  List<Step> steps() {
    return List.copyOf(steps);
  }

  /** The summary table. */
  void table(PrintStream out, boolean ok) {
    out.println();
    out.printf(
        Locale.ROOT, "%-34s %9s %11s %11s %9s%n", "step", "time", "bytes", "proxy RSS", "restarts");
    for (Step s : steps) {
      out.printf(
          Locale.ROOT,
          "%-34s %6d ms %11s %11s %9s%n",
          s.name(),
          s.millis(),
          s.bytes() < 0 ? "-" : size(s.bytes()),
          s.proxyRss() < 0 ? "-" : size(s.proxyRss()),
          s.restarts() < 0 ? "-" : Long.toString(s.restarts()));
    }
    long total = steps.stream().mapToLong(Step::millis).sum();
    out.printf(Locale.ROOT, "%-34s %6d ms%n", "total", total);
    for (Step s : steps) {
      if (!s.note().isEmpty()) {
        out.printf(Locale.ROOT, "* %s: %s%n", s.name(), s.note());
      }
    }
    out.println(ok ? "result: every step done" : "result: FAILED (see above and the driver log)");
  }

  /** The summary as one JSON object. */
  String json(boolean ok, String kernelNfs, String driverLog) {
    StringBuilder sb = new StringBuilder("{\"ok\":").append(ok);
    sb.append(",\"kernelNfsClient\":").append(quote(kernelNfs));
    sb.append(",\"driverLog\":").append(quote(driverLog));
    sb.append(",\"steps\":[");
    for (int i = 0; i < steps.size(); i++) {
      Step s = steps.get(i);
      sb.append(i == 0 ? "" : ",")
          .append("{\"step\":")
          .append(quote(s.name()))
          .append(",\"millis\":")
          .append(s.millis());
      if (s.bytes() >= 0) {
        sb.append(",\"bytes\":").append(s.bytes());
      }
      if (s.proxyRss() >= 0) {
        sb.append(",\"proxyRssBytes\":").append(s.proxyRss());
      }
      if (s.restarts() >= 0) {
        sb.append(",\"proxyRestarts\":").append(s.restarts());
      }
      if (!s.note().isEmpty()) {
        sb.append(",\"note\":").append(quote(s.note()));
      }
      sb.append('}');
    }
    return sb.append(']').append(heal).append('}').toString();
  }

  static String size(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    if (bytes < 1 << 20) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
    return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
  }

  static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}

package io.efscsi.demo;

import io.efscsi.proxy.json.Json;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
  private Map<String, Object> heal;

  /** The heal's facts, for the JSON summary. */
  void heal(int portBefore, int portAfter, long killToServingMillis, boolean byteExact) {
    heal = new LinkedHashMap<>();
    heal.put("portBefore", portBefore);
    heal.put("portAfter", portAfter);
    heal.put("samePort", portBefore == portAfter);
    heal.put("killToServingMillis", killToServingMillis);
    heal.put("byteExact", byteExact);
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

  /** The summary as one JSON object, on one line (the shared {@link Json}). */
  String json(boolean ok, String kernelNfs, String driverLog) {
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("ok", ok);
    summary.put("kernelNfsClient", kernelNfs);
    summary.put("driverLog", driverLog);
    List<Map<String, Object>> list = new ArrayList<>();
    for (Step s : steps) {
      Map<String, Object> step = new LinkedHashMap<>();
      step.put("step", s.name());
      step.put("millis", s.millis());
      if (s.bytes() >= 0) {
        step.put("bytes", s.bytes());
      }
      if (s.proxyRss() >= 0) {
        step.put("proxyRssBytes", s.proxyRss());
      }
      if (s.restarts() >= 0) {
        step.put("proxyRestarts", s.restarts());
      }
      if (!s.note().isEmpty()) {
        step.put("note", s.note());
      }
      list.add(step);
    }
    summary.put("steps", list);
    if (heal != null) {
      summary.put("heal", heal);
    }
    return Json.line(summary);
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
}

package io.efscsi.launcher.preflight;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** The pre-flight check's answer: one row per object or mount, printed as an aligned table. */
public final class PreflightTable {

  /** What switching to this driver does to the object or mount. */
  public enum Verdict {
    /** Served by this driver as it is. */
    OK,
    /** A Go-driver mount a proxy of ours takes over on its port. */
    TAKE_OVER,
    /** Left as it is, and it keeps working (why is in the row). */
    LEAVE,
    /** Would break after the switch: fix it first (why is in the row). */
    REFUSE;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
  }

  /**
   * One row.
   *
   * @param kind {@code StorageClass}, {@code PersistentVolume} or {@code mount}
   * @param name the object's name, or the mount point and its port
   * @param verdict what the switch does to it
   * @param why the reason, in the words of the error this driver would answer
   */
  public record Row(String kind, String name, Verdict verdict, String why) {}

  private final List<Row> rows = new ArrayList<>();

  public void add(Row row) {
    rows.add(row);
  }

  public List<Row> rows() {
    return List.copyOf(rows);
  }

  /** 1 when any row would break, else 0. */
  public int exitCode() {
    return rows.stream().anyMatch(r -> r.verdict() == Verdict.REFUSE) ? 1 : 0;
  }

  /** The table, then one line counting each verdict. */
  public void print(PrintStream out) {
    int kind = "KIND".length();
    int name = "NAME".length();
    int verdict = "VERDICT".length();
    for (Row r : rows) {
      kind = Math.max(kind, r.kind().length());
      name = Math.max(name, r.name().length());
      verdict = Math.max(verdict, r.verdict().label().length());
    }
    String format = "%-" + kind + "s  %-" + name + "s  %-" + verdict + "s  %s%n";
    out.printf(format, "KIND", "NAME", "VERDICT", "WHY");
    for (Row r : rows) {
      out.printf(format, r.kind(), r.name(), r.verdict().label(), r.why());
    }
    StringBuilder sum = new StringBuilder();
    for (Verdict v : Verdict.values()) {
      long n = rows.stream().filter(r -> r.verdict() == v).count();
      sum.append(sum.isEmpty() ? "" : ", ").append(n).append(' ').append(v.label());
    }
    out.println(
        sum
            + (exitCode() == 0
                ? ": nothing would break"
                : ": fix the refused ones before switching (exit 1)"));
  }
}

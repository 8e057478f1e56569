package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

/**
 * What one kernel VM scenario recorded ({@code key=value} lines of its run), with its log attached
 * to every failed check (KernelReliabilityIT).
 */
record Facts(String scenario, Map<String, String> map, String log) {
  String get(String key) {
    String v = map.get(key);
    if (v == null) {
      throw new AssertionError(scenario + " recorded no " + key + "; its log:\n" + log);
    }
    return v;
  }

  long num(String key) {
    String v = get(key);
    if (!v.matches("-?\\d+")) {
      throw new AssertionError(scenario + ": " + key + "=" + v + " is no number; log:\n" + log);
    }
    return Long.parseLong(v);
  }

  void eq(String key, String expected) {
    assertEquals(expected, get(key), () -> scenario + ": " + key + "; log:\n" + log);
  }

  /** Every one of {@code keys} recorded "0". */
  void zeros(String... keys) {
    all("0", keys);
  }

  /** Every one of {@code keys} recorded {@code expected}. */
  void all(String expected, String... keys) {
    for (String k : keys) {
      eq(k, expected);
    }
  }

  void that(boolean cond, String what) {
    assertTrue(cond, () -> scenario + ": " + what + "; facts " + map + "; log:\n" + log);
  }

  /** A status line field: key port pid state restarts oom crashLooping lastExit. */
  String status(String key, int field) {
    String[] f = get(key).split(" ");
    that(f.length == 9, key + " is a status line");
    return f[field];
  }
}

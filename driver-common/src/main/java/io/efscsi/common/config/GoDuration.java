package io.efscsi.common.config;

import java.time.Duration;
import java.util.Map;

/**
 * Parses durations exactly as Go's {@code time.ParseDuration} does (30s, 1m30s, 250ms, 1.5h, -2µs),
 * to the nanosecond and with its range (at most 2^63-1 ns, or 2^63 ns negated); surrounding
 * whitespace is ignored.
 */
public final class GoDuration {

  private static final Map<String, Long> UNITS =
      Map.of(
          "ns", 1L,
          "us", 1_000L,
          "\u00b5s", 1_000L, // micro sign, as Go prints it
          "\u03bcs", 1_000L, // Greek mu
          "ms", 1_000_000L,
          "s", 1_000_000_000L,
          "m", 60_000_000_000L,
          "h", 3_600_000_000_000L);

  private GoDuration() {}

  public static Duration parse(String text) {
    String s = text.strip();
    boolean negative = s.startsWith("-");
    if (negative || s.startsWith("+")) {
      s = s.substring(1);
    }
    if (s.equals("0")) {
      return Duration.ZERO;
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    try {
      long minus = minusNanos(s, text);
      if (!negative && minus == Long.MIN_VALUE) {
        throw new ArithmeticException();
      }
      return Duration.ofNanos(negative ? minus : -minus);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("duration out of range: " + text);
    }
  }

  /**
   * Go's loop over the parts {@code [0-9]*(\.[0-9]*)?unit}, its uint64 arithmetic done on the
   * negated value (a long holds -2^63 as Go's uint64 holds 2^63; the exact operations throw where
   * Go reports an overflow), the fraction scaled in floating point as Go scales it.
   */
  private static long minusNanos(String s, String text) {
    long total = 0;
    int i = 0;
    while (i < s.length()) {
      int start = i;
      long whole = 0;
      for (; i < s.length() && isDigit(s.charAt(i)); i++) {
        whole = Math.subtractExact(Math.multiplyExact(whole, 10), s.charAt(i) - '0');
      }
      boolean digits = i > start;
      long fraction = 0;
      double scale = 1;
      if (i < s.length() && s.charAt(i) == '.') {
        int from = ++i;
        boolean full = false; // further digits add no precision, as in Go's leadingFraction
        for (; i < s.length() && isDigit(s.charAt(i)); i++) {
          int d = s.charAt(i) - '0';
          full = full || fraction < -(Long.MAX_VALUE / 10) || fraction * 10 < Long.MIN_VALUE + d;
          if (!full) {
            fraction = fraction * 10 - d;
            scale *= 10;
          }
        }
        digits = digits || i > from;
      }
      int unitFrom = i;
      while (i < s.length() && s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
        i++;
      }
      Long unit = UNITS.get(s.substring(unitFrom, i));
      if (!digits || unit == null) {
        throw new IllegalArgumentException("not a duration: " + text);
      }
      long part = Math.multiplyExact(whole, unit);
      if (fraction != 0) {
        part = Math.subtractExact(part, (long) (-(double) fraction * (unit / scale)));
      }
      total = Math.addExact(total, part);
    }
    return total;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}

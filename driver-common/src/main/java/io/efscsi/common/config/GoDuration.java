package io.efscsi.common.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations the way Go's {@code time.ParseDuration} writes them: 30s, 1m30s, 250ms. */
public final class GoDuration {

  private static final Pattern PART =
      Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

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
    Matcher m = PART.matcher(s);
    int at = 0;
    double nanos = 0;
    while (at < s.length()) {
      if (!m.find(at) || m.start() != at) {
        throw new IllegalArgumentException("not a duration: " + text);
      }
      double n = Double.parseDouble(m.group(1));
      nanos +=
          n
              * switch (m.group(2)) {
                case "ns" -> 1d;
                case "us", "µs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3600e9;
              };
      at = m.end();
    }
    Duration d = Duration.ofNanos((long) nanos);
    return negative ? d.negated() : d;
  }
}

package io.efscsi.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A duration flag ({@code --unmount-timeout=…}, {@code --timeout=…}) means what it means to the Go
 * driver:
 *
 * <ul>
 *   <li>any text is read as Go's {@code time.ParseDuration} reads it (ported below from Go's
 *       time/format.go, surrounding whitespace aside), or refused by both with a message;
 *   <li>any duration Go prints ({@code Duration.String}, ported below) is read back as itself.
 * </ul>
 */
class GoDurationFuzzTest {

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 210_000)
  @DictionaryEntries({"ns", "us", "µs", "μs", "ms", "h", "m", "s", ".", "-", "+"})
  void anyDurationIsReadAsGoReadsIt(FuzzedDataProvider data) {
    long nanos = data.consumeLong();
    String printed = goString(nanos);
    assertEquals(Duration.ofNanos(nanos), GoDuration.parse(printed), printed);

    String text = new String(data.consumeRemainingAsBytes(), StandardCharsets.UTF_8);
    OptionalLong go = goParse(text.strip());
    Duration got;
    try {
      got = GoDuration.parse(text);
    } catch (IllegalArgumentException refused) {
      if (refused.getMessage() == null || refused.getMessage().isBlank()) {
        throw new AssertionError("a refusal without a message", refused);
      }
      assertEquals(OptionalLong.empty(), go, () -> text + " refused: " + refused.getMessage());
      return;
    }
    assertEquals(go, OptionalLong.of(got.toNanos()), text);
  }

  private static final BigInteger MAX = BigInteger.ONE.shiftLeft(63); // 1<<63
  private static final Map<String, Long> UNITS =
      Map.of(
          "ns", 1L,
          "us", 1_000L,
          "µs", 1_000L, // U+00B5 micro sign
          "μs", 1_000L, // U+03BC Greek mu
          "ms", 1_000_000L,
          "s", 1_000_000_000L,
          "m", 60_000_000_000L,
          "h", 3_600_000_000_000L);

  /** Go's time.ParseDuration; empty for its errors. */
  static OptionalLong goParse(String s) {
    boolean neg = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      neg = s.charAt(0) == '-';
      s = s.substring(1);
    }
    if (s.equals("0")) {
      return OptionalLong.of(0);
    }
    if (s.isEmpty()) {
      return OptionalLong.empty();
    }
    BigInteger d = BigInteger.ZERO;
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c == '.' || (c >= '0' && c <= '9'))) {
        return OptionalLong.empty();
      }
      int start = i;
      BigInteger v = BigInteger.ZERO;
      for (; i < s.length() && isDigit(s.charAt(i)); i++) { // leadingInt
        v = v.multiply(BigInteger.TEN).add(BigInteger.valueOf(s.charAt(i) - '0'));
        if (v.compareTo(MAX) > 0) {
          return OptionalLong.empty();
        }
      }
      boolean pre = i != start;
      boolean post = false;
      BigInteger f = BigInteger.ZERO;
      double scale = 1;
      if (i < s.length() && s.charAt(i) == '.') { // leadingFraction
        i++;
        int fracStart = i;
        boolean overflow = false;
        for (; i < s.length() && isDigit(s.charAt(i)); i++) {
          if (overflow) {
            continue;
          }
          BigInteger y = f.multiply(BigInteger.TEN).add(BigInteger.valueOf(s.charAt(i) - '0'));
          if (f.compareTo(MAX.subtract(BigInteger.ONE).divide(BigInteger.TEN)) > 0
              || y.compareTo(MAX) > 0) {
            overflow = true;
            continue;
          }
          f = y;
          scale *= 10;
        }
        post = i != fracStart;
      }
      if (!pre && !post) {
        return OptionalLong.empty();
      }
      int unitStart = i;
      while (i < s.length() && s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
        i++;
      }
      Long unit = UNITS.get(s.substring(unitStart, i));
      if (unit == null) {
        return OptionalLong.empty(); // a missing or unknown unit
      }
      BigInteger u = BigInteger.valueOf(unit);
      if (v.compareTo(MAX.divide(u)) > 0) {
        return OptionalLong.empty();
      }
      v = v.multiply(u);
      if (f.signum() > 0) {
        v = v.add(BigInteger.valueOf((long) (f.doubleValue() * ((double) unit / scale))));
        if (v.compareTo(MAX) > 0) {
          return OptionalLong.empty();
        }
      }
      d = d.add(v);
      if (d.compareTo(MAX) > 0) {
        return OptionalLong.empty();
      }
    }
    if (neg) {
      return OptionalLong.of(d.negate().longValue());
    }
    return d.compareTo(MAX) < 0 ? OptionalLong.of(d.longValue()) : OptionalLong.empty();
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** Go's Duration.String: 1h2m3.5s, 1.5ms, 2µs, 3ns, 0s. */
  static String goString(long d) {
    if (d == 0) {
      return "0s";
    }
    BigInteger u = BigInteger.valueOf(d).abs();
    String sign = d < 0 ? "-" : "";
    BigInteger second = BigInteger.valueOf(1_000_000_000L);
    if (u.compareTo(second) < 0) {
      long n = u.longValue();
      if (n < 1_000) {
        return sign + n + "ns";
      }
      if (n < 1_000_000) {
        return sign + fraction(n, 3) + "µs";
      }
      return sign + fraction(n, 6) + "ms";
    }
    BigInteger[] secs = u.divideAndRemainder(second);
    BigInteger minutes = secs[0].divide(BigInteger.valueOf(60));
    String s =
        fraction(
                secs[0].mod(BigInteger.valueOf(60)).longValue() * 1_000_000_000L
                    + secs[1].longValue(),
                9)
            + "s";
    if (minutes.signum() == 0) {
      return sign + s;
    }
    BigInteger hours = minutes.divide(BigInteger.valueOf(60));
    String m = minutes.mod(BigInteger.valueOf(60)) + "m" + s;
    return sign + (hours.signum() == 0 ? m : hours + "h" + m);
  }

  /** v / 10^prec with the fraction's trailing zeros (and a bare point) left out. */
  private static String fraction(long v, int prec) {
    long pow = (long) Math.pow(10, prec);
    String digits = String.format("%0" + prec + "d", v % pow).replaceAll("0+$", "");
    return (v / pow) + (digits.isEmpty() ? "" : "." + digits);
  }
}

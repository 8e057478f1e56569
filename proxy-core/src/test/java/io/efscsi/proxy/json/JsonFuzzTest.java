package io.efscsi.proxy.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The one JSON reader of files others wrote (efs-utils' state files, the proxies' state records, a
 * proxy's status answer):
 *
 * <ul>
 *   <li>any text is read exactly as a small reference reader in this test reads it, or refused by
 *       both ({@code IllegalArgumentException}, never another failure);
 *   <li>what it reads, written and read again, is the same value (numbers are written as integers);
 *   <li>any value it can write (strings of any characters, integers, nested up to {@link
 *       Json#MAX_DEPTH}) is read back as itself; one level deeper is refused.
 * </ul>
 */
class JsonFuzzTest {

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 130_000)
  @DictionaryEntries({"\"", "\\u", "\\u00", "true", "false", "null", "e+", "E-", "\": ", "[", "{"})
  void anyTextIsReadAsTheReferenceReadsItAndValuesRoundTrip(FuzzedDataProvider data) {
    Object tree = wrap(tree(data, 0), data.consumeInt(0, Json.MAX_DEPTH + 2));
    String written = Json.write(tree);
    if (depth(tree) > Json.MAX_DEPTH) {
      assertThrows(IllegalArgumentException.class, () -> Json.parse(written), written);
    } else {
      assertEquals(tree, Json.parse(written), written);
    }

    String text = new String(data.consumeRemainingAsBytes(), StandardCharsets.UTF_8);
    Object expected = Reference.read(text);
    Object got;
    try {
      got = Json.parse(text);
    } catch (IllegalArgumentException refused) {
      if (refused.getMessage() == null || !refused.getMessage().startsWith("invalid JSON at ")) {
        throw new AssertionError("a refusal without its offset: " + refused.getMessage(), refused);
      }
      assertEquals(Reference.REFUSED, expected, () -> "refused " + text + ": " + refused);
      return;
    }
    assertEquals(expected, got, () -> "read differently from the reference: " + text);
    assertTrue(depth(got) <= Json.MAX_DEPTH, "read deeper than the limit");
    assertEquals(asWritten(got), Json.parse(Json.write(got)), "written and read again");
    assertEquals(asWritten(got), Json.parse(Json.line(got)), "written on one line and read again");
  }

  private static Object tree(FuzzedDataProvider data, int depth) {
    int kind = data.consumeInt(0, depth >= 4 ? 3 : 5);
    return switch (kind) {
      case 0 -> null;
      case 1 -> data.consumeBoolean();
      case 2 -> data.consumeLong();
      case 3 -> data.consumeString(24);
      case 4 -> {
        List<Object> l = new ArrayList<>();
        for (int n = data.consumeInt(0, 3); n > 0; n--) {
          l.add(tree(data, depth + 1));
        }
        yield l;
      }
      default -> {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int n = data.consumeInt(0, 3); n > 0; n--) {
          m.put(data.consumeString(12), tree(data, depth + 1));
        }
        yield m;
      }
    };
  }

  private static Object wrap(Object v, int levels) {
    for (int k = 0; k < levels; k++) {
      List<Object> l = new ArrayList<>();
      l.add(v);
      v = l;
    }
    return v;
  }

  private static int depth(Object v) {
    int d = 0;
    if (v instanceof Map<?, ?> m) {
      for (Object x : m.values()) {
        d = Math.max(d, depth(x));
      }
      return d + 1;
    }
    if (v instanceof List<?> l) {
      for (Object x : l) {
        d = Math.max(d, depth(x));
      }
      return d + 1;
    }
    return 0;
  }

  /** The value as the writer writes it: a number that is not finite as null. */
  private static Object asWritten(Object v) {
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      m.forEach((k, x) -> out.put((String) k, asWritten(x)));
      return out;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      l.forEach(x -> out.add(asWritten(x)));
      return out;
    }
    return v instanceof Double d && !Double.isFinite(d) ? null : v;
  }

  /**
   * JSON (RFC 8259) with the tolerances the reader has on purpose: any Java whitespace between
   * tokens, raw control characters in strings, numbers with leading zeros, a leading or trailing
   * decimal point; integers are Longs (larger ones are refused), other numbers Doubles; the last of
   * repeated keys wins.
   */
  static final class Reference {

    static final Object REFUSED =
        new Object() {
          @Override
          public String toString() {
            return "(refused)";
          }
        };

    private static final Pattern NUMBER =
        Pattern.compile("-?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?");
    private static final Pattern INTEGER = Pattern.compile("-?[0-9]+");

    private final String s;
    private int i;

    private Reference(String s) {
      this.s = s;
    }

    private static final class Refused extends RuntimeException {
      private static final long serialVersionUID = 1L;

      Refused() {
        super(null, null, false, false);
      }
    }

    static Object read(String text) {
      Reference r = new Reference(text);
      try {
        Object v = r.value(0);
        r.skipSpace();
        if (r.i != text.length()) {
          return REFUSED;
        }
        return v;
      } catch (Refused e) {
        return REFUSED;
      }
    }

    private Object value(int depth) {
      skipSpace();
      if (i >= s.length()) {
        throw new Refused();
      }
      char c = s.charAt(i);
      if (c == '[' || c == '{') {
        if (depth + 1 > Json.MAX_DEPTH) {
          throw new Refused();
        }
        return c == '[' ? list(depth + 1) : map(depth + 1);
      }
      if (c == '"') {
        return string();
      }
      for (String word : new String[] {"true", "false", "null"}) {
        if (s.startsWith(word, i)) {
          i += word.length();
          return word.equals("null") ? null : Boolean.valueOf(word);
        }
      }
      if (c == '-' || (c >= '0' && c <= '9')) {
        return number();
      }
      throw new Refused();
    }

    private List<Object> list(int depth) {
      i++;
      List<Object> l = new ArrayList<>();
      skipSpace();
      if (take(']')) {
        return l;
      }
      do {
        l.add(value(depth));
        skipSpace();
      } while (take(','));
      if (!take(']')) {
        throw new Refused();
      }
      return l;
    }

    private Map<String, Object> map(int depth) {
      i++;
      Map<String, Object> m = new LinkedHashMap<>();
      skipSpace();
      if (take('}')) {
        return m;
      }
      do {
        skipSpace();
        if (i >= s.length() || s.charAt(i) != '"') {
          throw new Refused();
        }
        String key = string();
        skipSpace();
        if (!take(':')) {
          throw new Refused();
        }
        m.put(key, value(depth));
        skipSpace();
      } while (take(','));
      if (!take('}')) {
        throw new Refused();
      }
      return m;
    }

    private String string() {
      i++;
      StringBuilder sb = new StringBuilder();
      while (i < s.length()) {
        char c = s.charAt(i++);
        if (c == '"') {
          return sb.toString();
        }
        if (c != '\\') {
          sb.append(c);
        } else if (i < s.length() && "\"\\/bfnrt".indexOf(s.charAt(i)) >= 0) {
          sb.append("\"\\/\b\f\n\r\t".charAt("\"\\/bfnrt".indexOf(s.charAt(i++))));
        } else if (i + 5 <= s.length()
            && s.charAt(i) == 'u'
            && s.substring(i + 1, i + 5).matches("[0-9a-fA-F]{4}")) {
          sb.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
          i += 5;
        } else {
          throw new Refused();
        }
      }
      throw new Refused();
    }

    private Object number() {
      int end = i;
      while (end < s.length() && "+-.eE0123456789".indexOf(s.charAt(end)) >= 0) {
        end++;
      }
      String token = s.substring(i, end);
      i = end;
      if (!NUMBER.matcher(token).matches()) {
        throw new Refused();
      }
      if (!INTEGER.matcher(token).matches()) {
        return Double.parseDouble(token);
      }
      try {
        return Long.parseLong(token);
      } catch (NumberFormatException tooLarge) {
        throw new Refused();
      }
    }

    private void skipSpace() {
      while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
        i++;
      }
    }

    private boolean take(char c) {
      if (i < s.length() && s.charAt(i) == c) {
        i++;
        return true;
      }
      return false;
    }
  }
}

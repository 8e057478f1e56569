package io.efscsi.proxy.json;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for the state records, the proxy's control socket, efs-utils' state files and
 * {@code efs-csi status} (none of these modules carries a JSON library): objects, arrays, strings,
 * numbers (integers as Long, others as Double), booleans and null. Parse errors name the offset.
 * Objects and arrays nest at most {@link #MAX_DEPTH} deep, so that no file on the host can exhaust
 * the reader's stack.
 */
public final class Json {

  /**
   * How deep objects and arrays may nest ({@code []} is 1); the deepest file read here (efs-utils'
   * state, a record, a proxy's status) nests 2.
   */
  public static final int MAX_DEPTH = 64;

  private final String s;
  private int i;
  private int depth;

  private Json(String s) {
    this.s = s;
  }

  /** Parses one JSON value; trailing garbage is an error. */
  public static Object parse(String text) {
    Json p = new Json(text);
    Object v = p.value();
    p.ws();
    if (p.i != text.length()) {
      throw p.error("trailing characters");
    }
    return v;
  }

  /** Writes maps, lists, strings, numbers, booleans and null, pretty enough for a human. */
  public static String write(Object v) {
    StringBuilder sb = new StringBuilder();
    write(sb, v, "");
    return sb.append('\n').toString();
  }

  /** The same on one line without a line end (a control socket's answer). */
  public static String line(Object v) {
    StringBuilder sb = new StringBuilder();
    write(sb, v, null);
    return sb.toString();
  }

  /** {@code indent} null: all on one line. */
  private static void write(StringBuilder sb, Object v, String indent) {
    switch (v) {
      case null -> sb.append("null");
      case Map<?, ?> m -> {
        if (m.isEmpty()) {
          sb.append("{}");
          return;
        }
        sb.append(indent == null ? "{" : "{\n");
        int n = 0;
        for (Map.Entry<?, ?> e : m.entrySet()) {
          if (indent != null) {
            sb.append(indent).append("  ");
          }
          string(sb, e.getKey().toString());
          sb.append(indent == null ? ":" : ": ");
          write(sb, e.getValue(), indent == null ? null : indent + "  ");
          boolean more = ++n < m.size();
          sb.append(indent == null ? (more ? "," : "") : (more ? ",\n" : "\n"));
        }
        if (indent != null) {
          sb.append(indent);
        }
        sb.append('}');
      }
      case List<?> l -> {
        sb.append('[');
        for (int k = 0; k < l.size(); k++) {
          if (k > 0) {
            sb.append(indent == null ? "," : ", ");
          }
          write(sb, l.get(k), indent);
        }
        sb.append(']');
      }
      case Double d -> number(sb, d);
      case Float f -> number(sb, f.doubleValue());
      case Number num -> sb.append(num.longValue());
      case Boolean b -> sb.append(b);
      default -> string(sb, v.toString());
    }
  }

  /** A finite number as Java prints it (valid JSON, read back as the same double); else null. */
  private static void number(StringBuilder sb, double d) {
    sb.append(Double.isFinite(d) ? Double.toString(d) : "null");
  }

  private static void string(StringBuilder sb, String str) {
    sb.append('"');
    for (char c : str.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> sb.append("\\r");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  private Object value() {
    ws();
    if (i >= s.length()) {
      throw error("unexpected end");
    }
    char c = s.charAt(i);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> {
        if (c == '-' || (c >= '0' && c <= '9')) {
          yield number();
        }
        throw error("unexpected '" + c + "'");
      }
    };
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    enter();
    i++;
    ws();
    if (peek('}')) {
      i++;
      depth--;
      return m;
    }
    while (true) {
      ws();
      if (!peek('"')) {
        throw error("expected a key");
      }
      String k = string();
      ws();
      expect(':');
      m.put(k, value());
      ws();
      if (peek(',')) {
        i++;
      } else {
        expect('}');
        depth--;
        return m;
      }
    }
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    enter();
    i++;
    ws();
    if (peek(']')) {
      i++;
      depth--;
      return l;
    }
    while (true) {
      l.add(value());
      ws();
      if (peek(',')) {
        i++;
      } else {
        expect(']');
        depth--;
        return l;
      }
    }
  }

  private void enter() {
    if (++depth > MAX_DEPTH) {
      throw error("objects and arrays nested deeper than the limit of " + MAX_DEPTH);
    }
  }

  private String string() {
    i++;
    StringBuilder sb = new StringBuilder();
    while (true) {
      if (i >= s.length()) {
        throw error("unterminated string");
      }
      char c = s.charAt(i++);
      if (c == '"') {
        return sb.toString();
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      if (i >= s.length()) {
        throw error("unterminated escape");
      }
      char e = s.charAt(i++);
      switch (e) {
        case '"', '\\', '/' -> sb.append(e);
        case 'n' -> sb.append('\n');
        case 't' -> sb.append('\t');
        case 'r' -> sb.append('\r');
        case 'b' -> sb.append('\b');
        case 'f' -> sb.append('\f');
        case 'u' -> {
          if (i + 4 > s.length()) {
            throw error("short \\u escape");
          }
          int code = 0;
          for (int end = i + 4; i < end; i++) { // four ASCII hex digits: not "\\u-123", "\\u+041"
            if (!HexFormat.isHexDigit(s.charAt(i))) {
              throw error("bad \\u escape");
            }
            code = code * 16 + HexFormat.fromHexDigit(s.charAt(i));
          }
          sb.append((char) code);
        }
        default -> throw error("bad escape \\" + e);
      }
    }
  }

  /** An integer as a {@code Long}; a number with a fraction or exponent as a {@code Double}. */
  private Number number() {
    int start = i;
    if (peek('-')) {
      i++;
    }
    boolean fraction = false;
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (".eE+-".indexOf(c) >= 0) {
        fraction = true; // efs-utils' state files carry epoch seconds as floats
      } else if (c < '0' || c > '9') { // not Character.isDigit: "6" + ARABIC-INDIC FIVE was 65
        break;
      }
    }
    try {
      String text = s.substring(start, i);
      return fraction ? (Number) Double.parseDouble(text) : (Number) Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw error("bad number");
    }
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) {
      throw error("expected " + word);
    }
    i += word.length();
    return v;
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private boolean peek(char c) {
    return i < s.length() && s.charAt(i) == c;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("expected '" + c + "'");
    }
    i++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("invalid JSON at offset " + i + ": " + what);
  }
}

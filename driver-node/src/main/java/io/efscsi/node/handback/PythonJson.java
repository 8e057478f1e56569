package io.efscsi.node.handback;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * JSON as Python's {@code json.dump} prints it with its defaults, the form efs-utils' state files
 * have: {@code ", "} and {@code ": "} separators, keys in insertion order, non-ASCII as {@code
 * \\uXXXX} ({@code ensure_ascii}). Any JSON reader reads it; the same form keeps a handed-back
 * state file indistinguishable from one mount.efs wrote.
 */
public final class PythonJson {

  private PythonJson() {}

  public static String dump(Object v) {
    if (v instanceof Map<?, ?> m) {
      List<String> parts = new ArrayList<>();
      m.forEach((k, x) -> parts.add(dump(String.valueOf(k)) + ": " + dump(x)));
      return "{" + String.join(", ", parts) + "}";
    }
    if (v instanceof List<?> l) {
      return "[" + String.join(", ", l.stream().map(PythonJson::dump).toList()) + "]";
    }
    if (v instanceof String s) {
      return string(s);
    }
    if (v instanceof Double d) {
      return String.format(java.util.Locale.ROOT, "%.6f", d);
    }
    return String.valueOf(v);
  }

  private static String string(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default ->
            sb.append(c >= ' ' && c <= '~' ? String.valueOf(c) : "\\u%04x".formatted((int) c));
      }
    }
    return sb.append('"').toString();
  }
}

package io.efscsi.proxy;

import java.util.Map;

/** Minimal JSON writing for the control socket (the proxy carries no JSON library). */
final class Json {

  private Json() {}

  static String object(Map<String, Object> m) {
    StringBuilder sb = new StringBuilder("{");
    boolean first = true;
    for (Map.Entry<String, Object> e : m.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      string(sb, e.getKey());
      sb.append(':');
      Object v = e.getValue();
      if (v == null) {
        sb.append("null");
      } else if (v instanceof Number || v instanceof Boolean) {
        sb.append(v);
      } else {
        string(sb, v.toString());
      }
    }
    return sb.append('}').toString();
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
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
}

package io.efscsi.node.volume;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The Go standard library behaviours the Go driver's volume parsing relies on, so that a volume
 * handle or attribute means here exactly what it meant there: {@code path.Clean}, {@code
 * strconv.ParseBool} and {@code net.ParseIP}.
 */
final class GoSyntax {

  private static final Pattern IPV4 =
      Pattern.compile(
          "(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})");
  private static final Pattern IPV6_CHARS = Pattern.compile("[0-9a-fA-F:.]+");

  private GoSyntax() {}

  /**
   * Go's {@code path.Clean}: the shortest path equivalent to {@code p} by purely lexical processing
   * ({@code //} → {@code /}, drop {@code .}, resolve {@code ..} against the previous element, never
   * above a root). The empty path is {@code "."}.
   */
  static String cleanPath(String p) {
    if (p.isEmpty()) {
      return ".";
    }
    boolean rooted = p.charAt(0) == '/';
    Deque<String> out = new ArrayDeque<>();
    for (String element : p.split("/")) {
      if (element.isEmpty() || element.equals(".")) {
        continue;
      }
      if (element.equals("..")) {
        if (!out.isEmpty() && !out.peekLast().equals("..")) {
          out.removeLast();
        } else if (!rooted) {
          out.addLast("..");
        }
        continue;
      }
      out.addLast(element);
    }
    String joined = String.join("/", out);
    if (rooted) {
      return "/" + joined;
    }
    return joined.isEmpty() ? "." : joined;
  }

  /** Go's {@code strconv.ParseBool}; empty when {@code v} is not one of its accepted forms. */
  static Optional<Boolean> parseBool(String v) {
    return switch (v) {
      case "1", "t", "T", "TRUE", "true", "True" -> Optional.of(true);
      case "0", "f", "F", "FALSE", "false", "False" -> Optional.of(false);
      default -> Optional.empty();
    };
  }

  /** The error text of Go's {@code strconv.ParseBool} for {@code v}. */
  static String parseBoolError(String v) {
    return "strconv.ParseBool: parsing " + quote(v) + ": invalid syntax";
  }

  /**
   * Whether {@code s} is an IP address literal as Go's {@code net.ParseIP} accepts it: IPv4 dotted
   * decimal with exactly four parts and no leading zeros, or IPv6 (with an optional embedded IPv4
   * tail), without brackets or zone. Never consults DNS.
   */
  static boolean isIpLiteral(String s) {
    var v4 = IPV4.matcher(s);
    if (v4.matches()) {
      for (int i = 1; i <= 4; i++) {
        if (Integer.parseInt(v4.group(i)) > 255) {
          return false;
        }
      }
      return true;
    }
    if (!s.contains(":") || !IPV6_CHARS.matcher(s).matches()) {
      return false;
    }
    try {
      InetAddress.ofLiteral(s);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** Go's {@code %q} for the plain strings we quote (backslash and double quote escaped). */
  static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}

package io.efscsi.node.volume;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Options for {@code mount -t nfs4}: checking one option and merging lists where a later value of
 * the same option replaces the earlier one in place. "The same option" is the name before {@code
 * =}, with {@code nfsvers}/{@code vers}, {@code soft}/{@code hard}/{@code softerr}, {@code
 * ro}/{@code rw}, {@code sync}/{@code async} and {@code X}/{@code noX} each counted as one.
 */
final class NfsOptions {

  private static final Pattern NAME = Pattern.compile("[a-z0-9_][a-z0-9_-]*");
  private static final Set<String> POSITIVE_INTEGERS = Set.of("rsize", "wsize", "timeo");
  private static final Set<String> VERSIONS = Set.of("4", "4.0", "4.1");

  private NfsOptions() {}

  /**
   * Why {@code option} cannot be given to {@code mount -t nfs4} here, or {@code null} when it can.
   */
  static String problem(String option) {
    int eq = option.indexOf('=');
    String name = eq < 0 ? option : option.substring(0, eq);
    String value = eq < 0 ? null : option.substring(eq + 1);
    if (!NAME.matcher(name).matches()) {
      return "expected name or name=value";
    }
    if (POSITIVE_INTEGERS.contains(name) || name.equals("retrans")) {
      long min = name.equals("retrans") ? 0 : 1;
      if (value == null || !value.matches("[0-9]{1,9}") || Long.parseLong(value) < min) {
        return "expected " + (min == 0 ? "a non-negative" : "a positive") + " integer";
      }
    }
    return switch (name) {
      case "nfsvers", "vers" ->
          value != null && VERSIONS.contains(value)
              ? null
              : "EFS serves NFS 4.0 and 4.1 (expected 4, 4.0 or 4.1)";
      case "port" -> "the node sets port= to its proxy's local port";
      case "proto" ->
          "tcp".equals(value) ? null : "the local proxy only speaks TCP (expected proto=tcp)";
      default -> null;
    };
  }

  /** The key under which two options count as the same one. */
  static String key(String option) {
    int eq = option.indexOf('=');
    String name = (eq < 0 ? option : option.substring(0, eq)).toLowerCase(Locale.ROOT);
    return switch (name) {
      case "vers", "nfsvers" -> "nfsvers";
      case "soft", "hard", "softerr" -> "soft|hard";
      case "ro", "rw" -> "ro|rw";
      case "sync", "async" -> "sync|async";
      default -> eq < 0 && name.startsWith("no") && name.length() > 2 ? name.substring(2) : name;
    };
  }

  /**
   * {@code base}, then each of {@code overrides} in order: an option already present is replaced
   * where it stands, a new one is appended.
   */
  static List<String> merge(List<String> base, List<String> overrides) {
    Map<String, String> merged = new LinkedHashMap<>();
    for (String o : base) {
      merged.put(key(o), o);
    }
    for (String o : overrides) {
      merged.put(key(o), o);
    }
    return new ArrayList<>(merged.values());
  }
}

package io.efscsi.node.takeover;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The INI file efs-utils writes for stunnel and efs-proxy alike ({@code stunnel-config.<stem>}):
 * global {@code key = value} lines, then an {@code [efs]} section. A key may repeat ({@code
 * socket}).
 */
final class StunnelConfig {

  private final Map<String, List<String>> global;
  private final Map<String, List<String>> efs;

  private StunnelConfig(Map<String, List<String>> global, Map<String, List<String>> efs) {
    this.global = global;
    this.efs = efs;
  }

  static StunnelConfig parse(String text) throws UnusableStateException {
    Map<String, List<String>> global = new LinkedHashMap<>();
    Map<String, List<String>> efs = new LinkedHashMap<>();
    Map<String, List<String>> current = global;
    boolean sawEfs = false;
    for (String raw : text.split("\n", -1)) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        String name = line.substring(1, line.length() - 1).strip();
        if (!name.equals("efs")) {
          throw new UnusableStateException(
              "the tunnel config has an unknown section [" + name + "]");
        }
        if (sawEfs) {
          throw new UnusableStateException("the tunnel config has two [efs] sections");
        }
        sawEfs = true;
        current = efs;
        continue;
      }
      int eq = line.indexOf('=');
      if (eq <= 0) {
        throw new UnusableStateException(
            "the tunnel config has a line that is not key = value: " + line);
      }
      current
          .computeIfAbsent(line.substring(0, eq).strip(), k -> new ArrayList<>())
          .add(line.substring(eq + 1).strip());
    }
    if (!sawEfs) {
      throw new UnusableStateException("the tunnel config has no [efs] section");
    }
    return new StunnelConfig(global, efs);
  }

  /** A single-valued key of the {@code [efs]} section. */
  Optional<String> efs(String key) throws UnusableStateException {
    return single(efs, key, "[efs] ");
  }

  /** A single-valued global key. */
  Optional<String> global(String key) throws UnusableStateException {
    return single(global, key, "");
  }

  private static Optional<String> single(Map<String, List<String>> m, String key, String where)
      throws UnusableStateException {
    List<String> v = m.get(key);
    if (v == null) {
      return Optional.empty();
    }
    if (v.size() > 1) {
      throw new UnusableStateException("the tunnel config sets " + where + key + " twice");
    }
    return Optional.of(v.get(0));
  }
}

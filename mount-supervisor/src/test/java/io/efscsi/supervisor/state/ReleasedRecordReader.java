package io.efscsi.supervisor.state;

import io.efscsi.proxy.json.Json;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The state record reader of the last release before rolling upgrades (commit ad89752, {@code
 * ProxyRecord.fromJson}), frozen here verbatim but for its name: what a plugin rolled back to that
 * release reads. Never edit it to follow this build; move it on only with the release it names.
 */
final class ReleasedRecordReader {

  /** The fields that release reads, as they are. */
  record Released(
      String id,
      String key,
      int port,
      long pid,
      long startTicks,
      String cgroup,
      Map<String, String> config,
      Set<String> users,
      long restarts,
      long createdMillis) {}

  static final int VERSION = 1;

  private ReleasedRecordReader() {}

  static Released fromJson(String text) {
    if (!(Json.parse(text) instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException("a state record must be a JSON object");
    }
    long version = number(m, "version");
    if (version < 1 || version > VERSION) {
      throw new IllegalArgumentException(
          "state record version "
              + version
              + " is not supported (this build reads 1-"
              + VERSION
              + ")");
    }
    Map<String, String> config = new TreeMap<>();
    if (!(m.get("config") instanceof Map<?, ?> c)) {
      throw new IllegalArgumentException("state record field 'config' must be an object");
    }
    c.forEach((k, v) -> config.put(k.toString(), String.valueOf(v)));
    if (!(m.get("users") instanceof List<?> u)) {
      throw new IllegalArgumentException("state record field 'users' must be an array");
    }
    Set<String> users = new TreeSet<>();
    u.forEach(x -> users.add(String.valueOf(x)));
    return new Released(
        text(m, "id"),
        text(m, "key"),
        Math.toIntExact(number(m, "port")),
        number(m, "pid"),
        number(m, "startTicks"),
        text(m, "cgroup"),
        config,
        users,
        number(m, "restarts"),
        number(m, "createdMillis"));
  }

  private static long number(Map<?, ?> m, String field) {
    if (!(m.get(field) instanceof Long l)) {
      throw new IllegalArgumentException("state record field '" + field + "' must be an integer");
    }
    return l;
  }

  private static String text(Map<?, ?> m, String field) {
    if (!(m.get(field) instanceof String s)) {
      throw new IllegalArgumentException("state record field '" + field + "' must be a string");
    }
    return s;
  }
}

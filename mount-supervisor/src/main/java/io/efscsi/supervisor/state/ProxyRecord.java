package io.efscsi.supervisor.state;

import io.efscsi.proxy.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the state dir remembers about one proxy, so that a new node plugin can adopt it.
 *
 * @param id file-safe identifier derived from the mount key
 * @param key the mount key (file system, access point, TLS/IAM, target, options)
 * @param port the 127.0.0.1 port the proxy serves; stable across restarts
 * @param pid the proxy's process id, 0 when none is running
 * @param startTicks the process start time in clock ticks since boot ({@code /proc/<pid>/stat}
 *     field 22); together with the pid it identifies the process, immune to pid reuse
 * @param cgroup where the proxy was placed ({@code kind:path}), empty when not placed
 * @param config the proxy's configuration (proxy-core's config file form)
 * @param users who wants the proxy (staging paths); empty = nobody, it may go
 * @param restarts how many times it was restarted
 * @param createdMillis when the record was first written (epoch milliseconds)
 */
public record ProxyRecord(
    String id,
    String key,
    int port,
    long pid,
    long startTicks,
    String cgroup,
    Map<String, String> config,
    Set<String> users,
    long restarts,
    long createdMillis) {

  /** The record format; bumped on incompatible changes, older versions are migrated on read. */
  public static final int VERSION = 1;

  public ProxyRecord {
    if (id == null || !id.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new IllegalArgumentException("record id must be [A-Za-z0-9._-]{1,64}, got " + id);
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("record port must be 1-65535, got " + port);
    }
    config = java.util.Collections.unmodifiableMap(new TreeMap<>(config));
    users = java.util.Collections.unmodifiableSet(new TreeSet<>(users));
  }

  public boolean wanted() {
    return !users.isEmpty();
  }

  public ProxyRecord withProcess(long newPid, long newStartTicks, String newCgroup) {
    return new ProxyRecord(
        id, key, port, newPid, newStartTicks, newCgroup, config, users, restarts, createdMillis);
  }

  public ProxyRecord withUsers(Set<String> newUsers) {
    return new ProxyRecord(
        id, key, port, pid, startTicks, cgroup, config, newUsers, restarts, createdMillis);
  }

  public ProxyRecord withConfig(Map<String, String> newConfig) {
    return new ProxyRecord(
        id, key, port, pid, startTicks, cgroup, newConfig, users, restarts, createdMillis);
  }

  public ProxyRecord restarted() {
    return new ProxyRecord(
        id, key, port, pid, startTicks, cgroup, config, users, restarts + 1, createdMillis);
  }

  /** The JSON form. */
  public String toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", VERSION);
    m.put("id", id);
    m.put("key", key);
    m.put("port", port);
    m.put("pid", pid);
    m.put("startTicks", startTicks);
    m.put("cgroup", cgroup);
    m.put("config", new LinkedHashMap<String, Object>(config));
    m.put("users", new ArrayList<Object>(users));
    m.put("restarts", restarts);
    m.put("createdMillis", createdMillis);
    return Json.write(m);
  }

  /** Parses a record; anything missing, mistyped or from a newer version is refused. */
  public static ProxyRecord fromJson(String text) {
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
    return new ProxyRecord(
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

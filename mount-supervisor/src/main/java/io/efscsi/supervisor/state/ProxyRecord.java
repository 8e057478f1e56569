package io.efscsi.supervisor.state;

import io.efscsi.proxy.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * @param proxyBuild the build of the proxy running now ({@code ProxyBuild}: which release's proxy
 *     it is), empty when unknown (a record written by a release before rolling upgrades)
 * @param move a move to another build in flight ({@code ProxyMove}), empty otherwise
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
    long createdMillis,
    String proxyBuild,
    Optional<Move> move) {

  /**
   * The record format. Additions never bump it: a reader ignores fields it does not know, so the
   * previous release reads this one's records (and adopts its proxies after a rollback). A bump
   * makes every release that reads less move the record aside and lose its proxy; {@link
   * #MIN_READER} says which versions can still read a record written now.
   */
  public static final int VERSION = 1;

  /**
   * The oldest reader version that understands what this build writes: a record whose {@code
   * version} is above the reader's own is still read when its {@code minReader} is not.
   */
  public static final int MIN_READER = 1;

  /**
   * A proxy being moved to another build on its port (a rolling upgrade): {@code launching} while
   * the successor starts in standby ({@code pid}/{@code startTicks} name the successor, 0 until
   * spawned; {@code cgroup} is its group), {@code retiring} once the successor serves and is the
   * record's process ({@code pid}/{@code startTicks}/{@code cgroup} then name the old process,
   * which is being drained).
   */
  public record Move(String phase, long pid, long startTicks, String cgroup) {
    public static final String LAUNCHING = "launching";
    public static final String RETIRING = "retiring";

    public Move {
      if (!LAUNCHING.equals(phase) && !RETIRING.equals(phase)) {
        throw new IllegalArgumentException(
            "state record field 'move.phase' must be launching or retiring, got " + phase);
      }
      java.util.Objects.requireNonNull(cgroup, "move.cgroup");
    }

    public boolean launching() {
      return LAUNCHING.equals(phase);
    }
  }

  /** A record without a build or a move in flight (as every release before rolling upgrades). */
  public ProxyRecord(
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
    this(
        id,
        key,
        port,
        pid,
        startTicks,
        cgroup,
        config,
        users,
        restarts,
        createdMillis,
        "",
        Optional.empty());
  }

  public ProxyRecord {
    if (id == null || !id.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new IllegalArgumentException("record id must be [A-Za-z0-9._-]{1,64}, got " + id);
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("record port must be 1-65535, got " + port);
    }
    config = java.util.Collections.unmodifiableMap(new TreeMap<>(config));
    users = java.util.Collections.unmodifiableSet(new TreeSet<>(users));
    java.util.Objects.requireNonNull(proxyBuild, "proxyBuild");
    java.util.Objects.requireNonNull(move, "move");
  }

  public boolean wanted() {
    return !users.isEmpty();
  }

  public ProxyRecord withProcess(long newPid, long newStartTicks, String newCgroup) {
    return copy(newPid, newStartTicks, newCgroup, config, users, restarts, proxyBuild, move);
  }

  public ProxyRecord withUsers(Set<String> newUsers) {
    return copy(pid, startTicks, cgroup, config, newUsers, restarts, proxyBuild, move);
  }

  public ProxyRecord withConfig(Map<String, String> newConfig) {
    return copy(pid, startTicks, cgroup, newConfig, users, restarts, proxyBuild, move);
  }

  public ProxyRecord restarted() {
    return copy(pid, startTicks, cgroup, config, users, restarts + 1, proxyBuild, move);
  }

  /** The build of the proxy the record's process runs. */
  public ProxyRecord withBuild(String build) {
    return copy(pid, startTicks, cgroup, config, users, restarts, build, move);
  }

  /** A move in flight, or none. */
  public ProxyRecord withMove(Optional<Move> newMove) {
    return copy(pid, startTicks, cgroup, config, users, restarts, proxyBuild, newMove);
  }

  /** The same proxy (id, key, port, creation) with these fields. */
  private ProxyRecord copy(
      long newPid,
      long newStartTicks,
      String newCgroup,
      Map<String, String> newConfig,
      Set<String> newUsers,
      long newRestarts,
      String newBuild,
      Optional<Move> newMove) {
    return new ProxyRecord(
        id,
        key,
        port,
        newPid,
        newStartTicks,
        newCgroup,
        newConfig,
        newUsers,
        newRestarts,
        createdMillis,
        newBuild,
        newMove);
  }

  /** The JSON form. */
  public String toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", VERSION);
    m.put("minReader", MIN_READER);
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
    if (!proxyBuild.isEmpty()) {
      m.put("proxyBuild", proxyBuild);
    }
    move.ifPresent(mv -> {
      Map<String, Object> o = new LinkedHashMap<>();
      o.put("phase", mv.phase());
      o.put("pid", mv.pid());
      o.put("startTicks", mv.startTicks());
      o.put("cgroup", mv.cgroup());
      m.put("move", o);
    });
    return Json.write(m);
  }

  /**
   * Parses a record; anything missing or mistyped is refused, and so is a newer version unless its
   * {@code minReader} says this build still reads it. Fields this build does not know are ignored.
   */
  public static ProxyRecord fromJson(String text) {
    if (!(Json.parse(text) instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException("a state record must be a JSON object");
    }
    long version = number(m, "version");
    long minReader = m.containsKey("minReader") ? number(m, "minReader") : version;
    if (version < 1 || (version > VERSION && minReader > VERSION)) {
      throw new IllegalArgumentException(
          "state record version "
              + version
              + " (readable from version "
              + minReader
              + ") is not supported (this build reads 1-"
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
        number(m, "createdMillis"),
        m.containsKey("proxyBuild") ? text(m, "proxyBuild") : "",
        move(m));
  }

  private static Optional<Move> move(Map<?, ?> m) {
    if (!m.containsKey("move")) {
      return Optional.empty();
    }
    if (!(m.get("move") instanceof Map<?, ?> mv)) {
      throw new IllegalArgumentException("state record field 'move' must be an object");
    }
    return Optional.of(
        new Move(
            text(mv, "phase"), number(mv, "pid"), number(mv, "startTicks"), text(mv, "cgroup")));
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

package io.efscsi.supervisor;

import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.process.ControlClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * What one proxy uses right now, for metrics and {@code efs-csi status}: its cgroup's memory and
 * the counters its control socket reports.
 *
 * @param key the mount key
 * @param port its 127.0.0.1 port
 * @param cgroup where it is placed ({@code kind:path})
 * @param memoryCurrent bytes charged to its cgroup now; -1 unknown
 * @param memoryPeak the most bytes ever charged to its cgroup; -1 unknown
 * @param memoryLimit its cgroup's memory limit; -1 none or unknown
 * @param counters the control socket's {@code status} object (bytes, connections, failures…); empty
 *     when the proxy is not running or did not answer in time
 */
public record ProxyUsage(
    String key,
    int port,
    String cgroup,
    long memoryCurrent,
    long memoryPeak,
    long memoryLimit,
    Map<String, Object> counters) {

  public ProxyUsage {
    counters = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(counters));
  }

  /**
   * The usage of the proxy in {@code group}, with the counters of a {@code status} asked on {@code
   * controlSocket} (none when null: the proxy is not running) within {@code timeout}.
   */
  static ProxyUsage ask(
      String key, int port, Placement group, Path controlSocket, Duration timeout) {
    Map<String, Object> counters = new LinkedHashMap<>();
    if (controlSocket != null) {
      try {
        if (Json.parse(ControlClient.ask(controlSocket, "status", timeout))
            instanceof Map<?, ?> m) {
          m.forEach((k, v) -> counters.put(k.toString(), v));
        }
      } catch (IOException | IllegalArgumentException e) {
        LoggerFactory.getLogger(ProxyUsage.class)
            .debug("proxy for port {} gave no status: {}", port, e.getMessage());
      }
    }
    return new ProxyUsage(
        key,
        port,
        group.describe(),
        group.memoryCurrent(),
        group.memoryPeak(),
        group.memoryLimit(),
        counters);
  }

  /** A numeric counter of the control socket's answer; 0 when absent or not a number. */
  public double counter(String name) {
    return counters.get(name) instanceof Number n ? n.doubleValue() : 0;
  }

  /** A text field of the control socket's answer; empty when absent. */
  public String text(String name) {
    Object v = counters.get(name);
    return v == null ? "" : v.toString();
  }
}

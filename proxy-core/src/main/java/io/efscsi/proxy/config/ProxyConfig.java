package io.efscsi.proxy.config;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Everything one proxy process needs, read from its config file (Java properties). The mount
 * supervisor writes it; the proxy validates it at start and refuses bad values with the key and the
 * value in the message.
 *
 * @param listenPort the 127.0.0.1 port the kernel mounts
 * @param upstreamHost DNS name (re-resolved for every new connection, its IPv6 and IPv4 addresses
 *     raced: Happy Eyeballs) or IP (connected as given) of the mount target
 * @param upstreamPort 2049 for EFS
 * @param tls encryption in transit; when false the tunnel is plain TCP
 * @param serverName name sent as SNI and checked against the server certificate
 * @param verifyHostname whether the certificate must match {@code serverName}
 * @param caFile trust anchors; empty = the bundled Amazon Root CA 1-4
 * @param certFile client certificate (the node's IAM/access point certificate), PEM
 * @param keyFile the client certificate's PKCS#8 key, PEM
 * @param bind which BindClientToPartition protocol to speak first on every upstream connection
 * @param bindTimeout how long to wait for the bind reply
 * @param maxConnections upper bound on upstream connections per kernel connection (the server's own
 *     limit applies too)
 * @param controlSocket where the control socket listens; empty = none
 * @param keepAliveIdle TCP keepalive idle time on upstream sockets
 * @param keepAliveInterval TCP keepalive probe interval
 * @param keepAliveCount TCP keepalive probes before the connection is declared dead
 * @param tcpUserTimeout how long written data may stay unacknowledged before the connection fails
 * @param scaleUpThreshold client throughput (bytes per second) above which more upstream
 *     connections are opened; 0 = the threshold the server advertises (efs-utils: 300 MiB/s)
 * @param connectAttemptDelay when {@code upstreamHost} is a name with several addresses, how long
 *     one connection attempt runs alone before the next address is tried too (RFC 8305's Connection
 *     Attempt Delay)
 */
public record ProxyConfig(
    int listenPort,
    String upstreamHost,
    int upstreamPort,
    boolean tls,
    String serverName,
    boolean verifyHostname,
    Optional<Path> caFile,
    Optional<Path> certFile,
    Optional<Path> keyFile,
    BindProtocol bind,
    Duration bindTimeout,
    int maxConnections,
    Optional<Path> controlSocket,
    Duration keepAliveIdle,
    Duration keepAliveInterval,
    int keepAliveCount,
    Duration tcpUserTimeout,
    long scaleUpThreshold,
    Duration connectAttemptDelay) {

  /** RFC 8305's recommended Connection Attempt Delay and the bounds it gives (section 5). */
  public static final Duration CONNECT_ATTEMPT_DELAY = Duration.ofMillis(250);

  private static final long MIN_ATTEMPT_DELAY_MS = 100;
  private static final long MAX_ATTEMPT_DELAY_MS = 2_000;

  /** The BindClientToPartition flavours efs-utils has shipped. */
  public enum BindProtocol {
    /**
     * efs-utils 3.x: program 400123 ("AWSFILE") version 1 procedure 2, four-int scale-up config.
     */
    AWSFILE_V3,
    /** efs-utils 2.x: program 100200 version 1 procedure 1, three-int scale-up config. */
    EFS_V2,
    /** No binding: a plain tunnel. */
    NONE
  }

  public ProxyConfig {
    if (listenPort < 1 || listenPort > 65535) {
      throw new ConfigException("listen.port", Integer.toString(listenPort), "a port 1-65535");
    }
    if (upstreamHost == null || upstreamHost.isBlank()) {
      throw new ConfigException("upstream.host", String.valueOf(upstreamHost), "a host name or IP");
    }
    if (upstreamPort < 1 || upstreamPort > 65535) {
      throw new ConfigException("upstream.port", Integer.toString(upstreamPort), "a port 1-65535");
    }
    if (certFile.isPresent() != keyFile.isPresent()) {
      throw new ConfigException(
          "tls.cert-file",
          certFile.map(Path::toString).orElse(""),
          "tls.cert-file and tls.key-file together");
    }
    if (scaleUpThreshold < 0) {
      throw new ConfigException(
          Keys.SCALE_UP_THRESHOLD, Long.toString(scaleUpThreshold), "0 or more bytes per second");
    }
    if (maxConnections < 1 || maxConnections > 64) {
      throw new ConfigException("max-connections", Integer.toString(maxConnections), "1-64");
    }
    if (connectAttemptDelay.toMillis() < MIN_ATTEMPT_DELAY_MS
        || connectAttemptDelay.toMillis() > MAX_ATTEMPT_DELAY_MS) {
      throw new ConfigException(
          Keys.CONNECT_ATTEMPT_DELAY_MS,
          Long.toString(connectAttemptDelay.toMillis()),
          MIN_ATTEMPT_DELAY_MS + "-" + MAX_ATTEMPT_DELAY_MS + " milliseconds (RFC 8305)");
    }
  }

  /** Reads and validates a config file. */
  public static ProxyConfig load(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    return fromMap(toMap(p));
  }

  /** Builds a config from key/value pairs (the file's content); unknown keys are refused. */
  public static ProxyConfig fromMap(Map<String, String> m) {
    for (String key : m.keySet()) {
      if (!Keys.ALL.contains(key)) {
        throw new ConfigException(key, m.get(key), "a known key: " + String.join(", ", Keys.ALL));
      }
    }
    String host = required(m, Keys.UPSTREAM_HOST);
    boolean tls = bool(m, Keys.TLS, true);
    return new ProxyConfig(
        integer(m, Keys.LISTEN_PORT, -1),
        host,
        integer(m, Keys.UPSTREAM_PORT, 2049),
        tls,
        m.getOrDefault(Keys.SERVER_NAME, host),
        bool(m, Keys.VERIFY_HOSTNAME, true),
        path(m, Keys.CA_FILE),
        path(m, Keys.CERT_FILE),
        path(m, Keys.KEY_FILE),
        bindProtocol(m.getOrDefault(Keys.BIND, "awsfile-v3")),
        Duration.ofMillis(integer(m, Keys.BIND_TIMEOUT_MS, 15_000)),
        integer(m, Keys.MAX_CONNECTIONS, 5),
        path(m, Keys.CONTROL_SOCKET),
        Duration.ofSeconds(integer(m, Keys.KEEPALIVE_IDLE_S, 5)),
        Duration.ofSeconds(integer(m, Keys.KEEPALIVE_INTERVAL_S, 2)),
        integer(m, Keys.KEEPALIVE_COUNT, 3),
        Duration.ofMillis(integer(m, Keys.TCP_USER_TIMEOUT_MS, 15_000)),
        longValue(m, Keys.SCALE_UP_THRESHOLD, 0),
        Duration.ofMillis(
            integer(m, Keys.CONNECT_ATTEMPT_DELAY_MS, (int) CONNECT_ATTEMPT_DELAY.toMillis())));
  }

  /** The file form of this config; {@code load(write(c)) equals c}. */
  public Map<String, String> toMap() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(Keys.LISTEN_PORT, Integer.toString(listenPort));
    m.put(Keys.UPSTREAM_HOST, upstreamHost);
    m.put(Keys.UPSTREAM_PORT, Integer.toString(upstreamPort));
    m.put(Keys.TLS, Boolean.toString(tls));
    m.put(Keys.SERVER_NAME, serverName);
    m.put(Keys.VERIFY_HOSTNAME, Boolean.toString(verifyHostname));
    caFile.ifPresent(v -> m.put(Keys.CA_FILE, v.toString()));
    certFile.ifPresent(v -> m.put(Keys.CERT_FILE, v.toString()));
    keyFile.ifPresent(v -> m.put(Keys.KEY_FILE, v.toString()));
    m.put(Keys.BIND, bind.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    m.put(Keys.BIND_TIMEOUT_MS, Long.toString(bindTimeout.toMillis()));
    m.put(Keys.MAX_CONNECTIONS, Integer.toString(maxConnections));
    controlSocket.ifPresent(v -> m.put(Keys.CONTROL_SOCKET, v.toString()));
    m.put(Keys.KEEPALIVE_IDLE_S, Long.toString(keepAliveIdle.toSeconds()));
    m.put(Keys.KEEPALIVE_INTERVAL_S, Long.toString(keepAliveInterval.toSeconds()));
    m.put(Keys.KEEPALIVE_COUNT, Integer.toString(keepAliveCount));
    m.put(Keys.TCP_USER_TIMEOUT_MS, Long.toString(tcpUserTimeout.toMillis()));
    m.put(Keys.SCALE_UP_THRESHOLD, Long.toString(scaleUpThreshold));
    m.put(Keys.CONNECT_ATTEMPT_DELAY_MS, Long.toString(connectAttemptDelay.toMillis()));
    return m;
  }

  /** Writes the config file atomically enough for a single writer (temp file, then move). */
  public void write(Path file) throws IOException {
    Properties p = new Properties();
    p.putAll(toMap());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (Writer w = Files.newBufferedWriter(tmp)) {
      p.store(w, "efs-csi proxy config");
    }
    Files.move(
        tmp,
        file,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  private static Map<String, String> toMap(Properties p) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String k : p.stringPropertyNames()) {
      m.put(k.strip(), p.getProperty(k).strip());
    }
    return m;
  }

  private static String required(Map<String, String> m, String key) {
    String v = m.get(key);
    if (v == null || v.isBlank()) {
      throw new ConfigException(key, "", "a value (the key is required)");
    }
    return v;
  }

  private static int integer(Map<String, String> m, String key, int def) {
    String v = m.get(key);
    if (v == null) {
      if (def < 0) {
        throw new ConfigException(key, "", "a value (the key is required)");
      }
      return def;
    }
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new ConfigException(key, v, "an integer");
    }
  }

  private static long longValue(Map<String, String> m, String key, long def) {
    String v = m.get(key);
    if (v == null) {
      return def;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new ConfigException(key, v, "an integer");
    }
  }

  private static boolean bool(Map<String, String> m, String key, boolean def) {
    String v = m.get(key);
    if (v == null) {
      return def;
    }
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new ConfigException(key, v, "true or false");
    };
  }

  private static Optional<Path> path(Map<String, String> m, String key) {
    String v = m.get(key);
    if (v == null || v.isBlank()) {
      return Optional.empty();
    }
    Path p = Path.of(v);
    if (!p.isAbsolute()) {
      throw new ConfigException(key, v, "an absolute path");
    }
    return Optional.of(p);
  }

  private static BindProtocol bindProtocol(String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "awsfile-v3" -> BindProtocol.AWSFILE_V3;
      case "efs-v2" -> BindProtocol.EFS_V2;
      case "none" -> BindProtocol.NONE;
      default -> throw new ConfigException(Keys.BIND, v, "awsfile-v3, efs-v2 or none");
    };
  }

  /** The config file's keys. */
  public static final class Keys {
    public static final String LISTEN_PORT = "listen.port";
    public static final String UPSTREAM_HOST = "upstream.host";
    public static final String UPSTREAM_PORT = "upstream.port";
    public static final String TLS = "tls";
    public static final String SERVER_NAME = "tls.server-name";
    public static final String VERIFY_HOSTNAME = "tls.verify-hostname";
    public static final String CA_FILE = "tls.ca-file";
    public static final String CERT_FILE = "tls.cert-file";
    public static final String KEY_FILE = "tls.key-file";
    public static final String BIND = "bind.protocol";
    public static final String BIND_TIMEOUT_MS = "bind.timeout-ms";
    public static final String MAX_CONNECTIONS = "max-connections";
    public static final String CONTROL_SOCKET = "control.socket";
    public static final String KEEPALIVE_IDLE_S = "keepalive.idle-seconds";
    public static final String KEEPALIVE_INTERVAL_S = "keepalive.interval-seconds";
    public static final String KEEPALIVE_COUNT = "keepalive.count";
    public static final String TCP_USER_TIMEOUT_MS = "tcp-user-timeout-ms";
    public static final String SCALE_UP_THRESHOLD = "scale-up.threshold-bytes-per-second";
    public static final String CONNECT_ATTEMPT_DELAY_MS = "upstream.connect-attempt-delay-ms";

    static final java.util.List<String> ALL =
        java.util.List.of(
            LISTEN_PORT,
            UPSTREAM_HOST,
            UPSTREAM_PORT,
            TLS,
            SERVER_NAME,
            VERIFY_HOSTNAME,
            CA_FILE,
            CERT_FILE,
            KEY_FILE,
            BIND,
            BIND_TIMEOUT_MS,
            MAX_CONNECTIONS,
            CONTROL_SOCKET,
            KEEPALIVE_IDLE_S,
            KEEPALIVE_INTERVAL_S,
            KEEPALIVE_COUNT,
            TCP_USER_TIMEOUT_MS,
            SCALE_UP_THRESHOLD,
            CONNECT_ATTEMPT_DELAY_MS);

    private Keys() {}
  }
}

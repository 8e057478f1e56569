package io.efscsi.proxy.config;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalInt;

/**
 * What the supervisor tells a proxy through its environment rather than its config file: the
 * listening socket it hands over (a rolling upgrade moves a port to a proxy of the new release) and
 * the build it started. Read in {@code main} only; tests build it from a map.
 *
 * @param listenFd {@value #LISTEN_FD}: a TCP socket listening on 127.0.0.1:listen.port that this
 *     process inherited; empty = bind the port itself
 * @param standbyTimeout {@value #STANDBY_TIMEOUT_MS}: how long a proxy on an inherited listener
 *     waits for {@code serve} before it exits
 * @param build {@value #BUILD}: the build that started this proxy, shown by {@code status}; "" when
 *     unset
 */
public record ProxyEnv(OptionalInt listenFd, Duration standbyTimeout, String build) {

  public static final String LISTEN_FD = "EFSCSI_LISTEN_FD";
  public static final String STANDBY_TIMEOUT_MS = "EFSCSI_STANDBY_TIMEOUT_MS";
  public static final String BUILD = "EFSCSI_PROXY_BUILD";

  public static final Duration STANDBY_TIMEOUT = Duration.ofMillis(120_000);

  /** A proxy that binds its own port, as before handovers existed. */
  public static final ProxyEnv NONE = new ProxyEnv(OptionalInt.empty(), STANDBY_TIMEOUT, "");

  public ProxyEnv {
    if (standbyTimeout.isNegative() || standbyTimeout.isZero()) {
      throw new ConfigException(
          STANDBY_TIMEOUT_MS, Long.toString(standbyTimeout.toMillis()), "1 or more milliseconds");
    }
  }

  /** Reads the variables above from {@code env} (the process environment in main). */
  public static ProxyEnv fromMap(Map<String, String> env) {
    String fd = env.get(LISTEN_FD);
    OptionalInt listenFd = OptionalInt.empty();
    if (fd != null && !fd.isEmpty()) {
      listenFd = OptionalInt.of((int) number(LISTEN_FD, fd, 0, Integer.MAX_VALUE));
    }
    String timeout = env.get(STANDBY_TIMEOUT_MS);
    Duration standby = STANDBY_TIMEOUT;
    if (timeout != null && !timeout.isEmpty()) {
      standby =
          Duration.ofMillis(number(STANDBY_TIMEOUT_MS, timeout, 1, Long.MAX_VALUE / 1_000_000));
    }
    return new ProxyEnv(listenFd, standby, env.getOrDefault(BUILD, ""));
  }

  /** A proxy on the inherited listener {@code fd}, otherwise as {@link #NONE}. */
  public static ProxyEnv inherited(int fd, Duration standbyTimeout) {
    return new ProxyEnv(OptionalInt.of(fd), standbyTimeout, "");
  }

  private static long number(String name, String value, long min, long max) {
    long n;
    try {
      n = Long.parseLong(value);
    } catch (NumberFormatException e) {
      n = min - 1;
    }
    if (n < min || n > max) {
      throw new ConfigException(name, value, "a whole number from " + min + " to " + max);
    }
    return n;
  }
}

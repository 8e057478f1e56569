package io.efscsi.supervisor.health;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.probe.UpstreamPing;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The supervisor's own look at a proxy's mount target: the proxy's upstream connection made from
 * the supervisor's process ({@link UpstreamPing}: same address, TLS name, CA, client certificate
 * and bind). One answer per target is kept for a while, so an outage under fifty volumes of one
 * file system costs one probe per round, not fifty.
 */
public final class TargetProbe {

  /** One attempt at a target: empty when it answered, else why not. */
  @FunctionalInterface
  public interface Attempt {
    Optional<String> failure(ProxyConfig config);
  }

  private record Answer(Optional<String> failure, Instant at) {}

  private final Attempt attempt;
  private final Duration keepFor;
  private final Clock clock;
  private final Map<List<Object>, Answer> answers = new ConcurrentHashMap<>();
  private final Map<List<Object>, Object> locks = new ConcurrentHashMap<>();

  public TargetProbe(Attempt attempt, Duration keepFor, Clock clock) {
    this.attempt = attempt;
    this.keepFor = keepFor;
    this.clock = clock;
  }

  /**
   * NFS NULL pings that give up after {@code timeout}; answers kept for {@code keepFor}. If this
   * process cannot make one at all (the native transport or TLS library does not load), the target
   * counts as reachable, so the rule is the one before this probe existed: a proxy whose pings fail
   * is restarted.
   */
  public static TargetProbe pinging(Duration timeout, Duration keepFor, Clock clock) {
    return new TargetProbe(
        config -> {
          try {
            UpstreamPing.once(config, timeout);
            return Optional.empty();
          } catch (IOException | RuntimeException e) {
            return Optional.of(String.valueOf(e.getMessage()));
          } catch (LinkageError e) {
            org.slf4j.LoggerFactory.getLogger(TargetProbe.class)
                .warn(
                    "cannot probe mount targets from the supervisor ({}); proxies whose pings"
                        + " fail are restarted",
                    e.toString());
            return Optional.empty();
          }
        },
        keepFor,
        clock);
  }

  /** Empty when the supervisor reaches the mount target of {@code config} itself; else why not. */
  public Optional<String> failure(ProxyConfig config) {
    List<Object> target =
        List.of(
            config.upstreamHost(),
            config.upstreamPort(),
            config.tls(),
            config.serverName(),
            config.verifyHostname(),
            config.caFile(),
            config.certFile(),
            config.keyFile(),
            config.bind());
    // one attempt at a time per target: proxies of one target checked at once share its answer
    synchronized (locks.computeIfAbsent(target, t -> new Object())) {
      Answer a = answers.get(target);
      if (a != null && Duration.between(a.at(), clock.instant()).compareTo(keepFor) < 0) {
        return a.failure();
      }
      Optional<String> failure = attempt.failure(config);
      answers.put(target, new Answer(failure, clock.instant()));
      return failure;
    }
  }
}

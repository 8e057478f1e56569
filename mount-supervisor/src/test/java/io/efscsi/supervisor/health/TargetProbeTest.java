package io.efscsi.supervisor.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyConfig;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TargetProbeTest {

  static ProxyConfig config(int listenPort, String host, int upstreamPort) {
    return ProxyConfig.fromMap(
        Map.of(
            "listen.port",
            Integer.toString(listenPort),
            "upstream.host",
            host,
            "upstream.port",
            Integer.toString(upstreamPort),
            "tls",
            "false",
            "bind.protocol",
            "none"));
  }

  /** A clock the test moves. */
  static final class Hands extends Clock {
    Instant now = Instant.parse("2026-11-26T00:00:00Z");

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }

  @Test
  void oneAttemptPerTargetPerPeriodWhateverTheNumberOfProxies() {
    List<String> attempts = new ArrayList<>();
    Hands clock = new Hands();
    TargetProbe probe =
        new TargetProbe(
            c -> {
              attempts.add(c.upstreamHost() + ":" + c.upstreamPort());
              return c.upstreamHost().equals("10.0.0.1")
                  ? Optional.of("refused")
                  : Optional.empty();
            },
            Duration.ofSeconds(10),
            clock);
    for (int port = 20049; port < 20099; port++) {
      assertEquals(Optional.of("refused"), probe.failure(config(port, "10.0.0.1", 2049)));
      assertEquals(Optional.empty(), probe.failure(config(port, "10.0.0.2", 2049)));
    }
    assertEquals(List.of("10.0.0.1:2049", "10.0.0.2:2049"), attempts, "50 proxies, 2 targets");
    clock.now = clock.now.plusSeconds(9);
    probe.failure(config(20049, "10.0.0.1", 2049));
    assertEquals(2, attempts.size(), "still fresh");
    clock.now = clock.now.plusSeconds(1);
    probe.failure(config(20049, "10.0.0.1", 2049));
    assertEquals(3, attempts.size(), "asked again once the answer is a period old");
  }

  @Test
  void theRealProbeReachesALiveTargetAndNamesWhyNotForADeadOne() throws Exception {
    TargetProbe probe =
        TargetProbe.pinging(Duration.ofSeconds(5), Duration.ZERO, Clock.systemUTC());
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort();
    }
    Optional<String> failure = probe.failure(config(20049, "127.0.0.1", dead));
    assertTrue(failure.isPresent() && failure.get().contains("refused"), failure.toString());
  }
}

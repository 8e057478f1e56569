package io.efscsi.supervisor.health;

import static io.efscsi.supervisor.health.HealthVerdict.HEALTHY;
import static io.efscsi.supervisor.health.HealthVerdict.RESTART_CONTROL_DEAD;
import static io.efscsi.supervisor.health.HealthVerdict.RESTART_PROXY_BROKEN;
import static io.efscsi.supervisor.health.HealthVerdict.SUSPECT;
import static io.efscsi.supervisor.health.HealthVerdict.TARGET_UNREACHABLE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Issue 31's table: control dead / ping failed while the target answers / both failed. */
class HealthVerdictTest {

  @ParameterizedTest(
      name = "control {0}/2, ping {1}/3, own probe {2}, slow {3} -> {4} (probe asked: {5})")
  @CsvSource({
    // everything answers
    "0, 0, true, false, HEALTHY, false",
    "0, 0, false, false, HEALTHY, false",
    // the control socket: two silent rounds restart, whatever the target does
    "1, 0, true, false, SUSPECT, false",
    "1, 5, false, false, SUSPECT, false",
    "2, 0, true, false, RESTART_CONTROL_DEAD, false",
    "2, 7, false, false, RESTART_CONTROL_DEAD, false",
    "9, 0, false, false, RESTART_CONTROL_DEAD, false",
    // pings through the tunnel fail: below the limit, count
    "0, 1, true, false, SUSPECT, false",
    "0, 2, false, false, SUSPECT, false",
    // at the limit the supervisor looks itself: it reaches the target -> the proxy is broken
    "0, 3, true, false, RESTART_PROXY_BROKEN, true",
    "0, 8, true, false, RESTART_PROXY_BROKEN, true",
    // it does not reach the target either -> an outage: the proxy stays up, every round
    "0, 3, false, false, TARGET_UNREACHABLE, true",
    "0, 30, false, false, TARGET_UNREACHABLE, true",
    // slow, not hung: requests unanswered by a process that keeps working, within the limit
    "1, 0, true, true, SUSPECT, false",
    "2, 0, true, true, SLOW, false",
    "9, 3, false, true, SLOW, false",
    "0, 3, true, true, SLOW, true",
    // an outage is told as one even when the proxy is slow too
    "0, 3, false, true, TARGET_UNREACHABLE, true",
  })
  void decides(
      int control, int ping, boolean reachable, boolean slow, HealthVerdict want, boolean asked) {
    AtomicInteger probes = new AtomicInteger();
    BooleanSupplier probe =
        () -> {
          probes.incrementAndGet();
          return reachable;
        };
    assertEquals(want, HealthVerdict.decide(control, 2, ping, 3, slow, probe));
    assertEquals(asked ? 1 : 0, probes.get(), "the supervisor's own probe asked only when needed");
  }

  @ParameterizedTest
  @CsvSource({
    "HEALTHY, false",
    "SUSPECT, false",
    "RESTART_CONTROL_DEAD, true",
    "RESTART_PROXY_BROKEN, true",
    "TARGET_UNREACHABLE, false",
    "SLOW, false"
  })
  void onlyAProxyAtFaultIsRestarted(HealthVerdict v, boolean restarts) {
    assertEquals(restarts, v.restarts());
  }

  @org.junit.jupiter.api.Test
  void anOutageNeverRestarts() {
    for (int ping = 0; ping < 100; ping++) {
      HealthVerdict v = HealthVerdict.decide(0, 2, ping, 3, false, () -> false);
      assertFalse(v.restarts(), "ping failures " + ping + ": " + v);
    }
    assertTrue(
        HealthVerdict.decide(2, 2, 0, 3, false, () -> false).restarts(), "a dead control socket");
    assertEquals(TARGET_UNREACHABLE, HealthVerdict.decide(0, 2, 3, 3, false, () -> false));
    assertEquals(HEALTHY, HealthVerdict.decide(0, 2, 0, 3, false, () -> false));
    assertEquals(SUSPECT, HealthVerdict.decide(1, 2, 0, 3, false, () -> true));
    assertEquals(RESTART_CONTROL_DEAD, HealthVerdict.decide(2, 2, 0, 3, false, () -> true));
    assertEquals(RESTART_PROXY_BROKEN, HealthVerdict.decide(0, 2, 3, 3, false, () -> true));
  }

  @org.junit.jupiter.api.Test
  void aSlowProxyIsNeverRestarted() {
    for (int control = 0; control < 20; control++) {
      for (int ping = 0; ping < 20; ping++) {
        for (boolean reachable : new boolean[] {true, false}) {
          HealthVerdict v = HealthVerdict.decide(control, 2, ping, 3, true, () -> reachable);
          assertFalse(v.restarts(), control + "/" + ping + "/" + reachable + ": " + v);
        }
      }
    }
  }
}

package io.efscsi.supervisor.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.supervisor.MutableClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MountPresenceTest {

  static MountInfo nfs(int id, int port) {
    return MountInfoParser.parseLine(
        id
            + " 1 0:"
            + id
            + " / /mnt/m"
            + id
            + " rw - nfs4 127.0.0.1:/ rw,port="
            + port
            + ",addr=127.0.0.1",
        1);
  }

  @Test
  void aMissingMountIsAbsentOnlyAfterEnoughReadsAndTheGrace() {
    MutableClock clock = new MutableClock();
    MountPresence p = new MountPresence(3, Duration.ofSeconds(10), clock);
    p.watch(20049);
    p.observe(List.of(nfs(1, 20049)));
    assertEquals(MountPresence.State.PRESENT, p.state(20049));

    // torn reads: missing twice, then back
    p.observe(List.of());
    p.observe(List.of());
    assertEquals(MountPresence.State.UNSURE, p.state(20049));
    p.observe(List.of(nfs(1, 20049)));
    assertEquals(MountPresence.State.PRESENT, p.state(20049));

    // missing from many reads, but not for long enough
    for (int i = 0; i < 5; i++) {
      p.observe(List.of());
    }
    assertEquals(MountPresence.State.UNSURE, p.state(20049));
    clock.advance(Duration.ofSeconds(11));
    assertEquals(MountPresence.State.ABSENT, p.state(20049));
  }

  @Test
  void longEnoughButTooFewReadsIsNotAbsent() {
    MutableClock clock = new MutableClock();
    MountPresence p = new MountPresence(3, Duration.ofSeconds(10), clock);
    p.watch(20050);
    clock.advance(Duration.ofMinutes(5));
    p.observe(List.of());
    p.observe(List.of());
    assertEquals(MountPresence.State.UNSURE, p.state(20050));
    p.observe(List.of());
    assertEquals(MountPresence.State.ABSENT, p.state(20050));
  }

  @Test
  void aNewlyWatchedPortHasItsGraceFromNow() {
    MutableClock clock = new MutableClock();
    MountPresence p = new MountPresence(1, Duration.ofSeconds(30), clock);
    p.watch(20051);
    p.observe(List.of());
    assertEquals(MountPresence.State.UNSURE, p.state(20051));
    clock.advance(Duration.ofSeconds(31));
    assertEquals(MountPresence.State.ABSENT, p.state(20051));
  }

  @Test
  void groupsSeveralMountsOfOnePort() {
    MountPresence p = new MountPresence(1, Duration.ZERO, new MutableClock());
    p.observe(List.of(nfs(1, 20049), nfs(2, 20049), nfs(3, 20060)));
    assertEquals(2, p.mounts(20049).size());
    assertEquals(java.util.Set.of(20049, 20060), p.mountedPorts());
  }
}

package io.efscsi.supervisor.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ProcProcessTableTest {

  @Test
  void parsesStartTimeAfterAWeirdCommName() {
    String stat =
        "1234 (java (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 778899 1000 10 ";
    assertEquals(OptionalLong.of(778899), ProcProcessTable.parseStartTicks(stat));
  }

  @Test
  void aZombieIsGone() {
    String stat = "1234 (java) Z 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 778899 0 0";
    assertEquals(OptionalLong.empty(), ProcProcessTable.parseStartTicks(stat));
  }

  @Test
  void seesItselfAndNotAStartTimeThatDoesNotMatch() {
    ProcProcessTable t = new ProcProcessTable();
    long me = ProcessHandle.current().pid();
    OptionalLong ticks = t.startTicks(me);
    assertTrue(ticks.isPresent());
    assertTrue(t.alive(me, ticks.getAsLong()));
    assertFalse(t.alive(me, ticks.getAsLong() + 1), "same pid, other start time = another process");
    assertFalse(t.alive(0, 0));
    assertFalse(t.startTicks(Integer.MAX_VALUE).isPresent());
  }
}

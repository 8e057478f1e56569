package io.efscsi.supervisor;

import static io.efscsi.supervisor.Decision.NOTHING;
import static io.efscsi.supervisor.Decision.RELEASE;
import static io.efscsi.supervisor.Decision.RESTART;
import static io.efscsi.supervisor.Decision.STOP_AND_RELEASE;
import static io.efscsi.supervisor.Decision.UNMOUNT_THEN_RELEASE;
import static io.efscsi.supervisor.host.MountPresence.State.ABSENT;
import static io.efscsi.supervisor.host.MountPresence.State.PRESENT;
import static io.efscsi.supervisor.host.MountPresence.State.UNSURE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.supervisor.host.MountPresence;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DecisionTest {

  @ParameterizedTest(name = "up={0} mount={1} wanted={2} -> {3}")
  @CsvSource({
    "true,  PRESENT, true,  NOTHING",
    "true,  PRESENT, false, NOTHING",
    "false, PRESENT, true,  RESTART",
    "false, PRESENT, false, UNMOUNT_THEN_RELEASE",
    "true,  ABSENT,  true,  STOP_AND_RELEASE",
    "true,  ABSENT,  false, STOP_AND_RELEASE",
    "false, ABSENT,  true,  RELEASE",
    "false, ABSENT,  false, RELEASE",
    "true,  UNSURE,  true,  NOTHING",
    "false, UNSURE,  false, NOTHING",
  })
  void theTable(boolean up, MountPresence.State mount, boolean wanted, Decision expected) {
    assertEquals(expected, Decision.decide(up, mount, wanted));
  }

  @org.junit.jupiter.api.Test
  void everyCombinationHasAnAnswerAndNoneTouchesAnUnsureMount() {
    for (boolean up : new boolean[] {true, false}) {
      for (boolean wanted : new boolean[] {true, false}) {
        assertEquals(NOTHING, Decision.decide(up, UNSURE, wanted));
        Decision present = Decision.decide(up, PRESENT, wanted);
        Decision absent = Decision.decide(up, ABSENT, wanted);
        // a present mount is never released without unmounting first
        assertEquals(
            true, present == NOTHING || present == RESTART || present == UNMOUNT_THEN_RELEASE);
        assertEquals(true, absent == STOP_AND_RELEASE || absent == RELEASE);
      }
    }
  }
}

package io.efscsi.supervisor.state;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SupervisorLockTest {

  @TempDir Path dir;

  @Test
  void heldWhileTakenAndFreeOnceClosedOrNeverTaken() throws Exception {
    assertFalse(SupervisorLock.held(dir), "no lock file: nobody supervises");
    Optional<SupervisorLock> lock = SupervisorLock.take(dir);
    assertTrue(lock.isPresent());
    assertTrue(SupervisorLock.held(dir));
    assertTrue(SupervisorLock.take(dir).isEmpty(), "a second supervisor does not get it");
    lock.get().close();
    assertFalse(SupervisorLock.held(dir), "let go at close");
    Optional<SupervisorLock> again = SupervisorLock.take(dir);
    assertTrue(again.isPresent(), "and can be taken again");
    again.get().close();
  }
}

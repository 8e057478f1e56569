package io.efscsi.supervisor.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.process.ProcessTable.Activity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  @Test
  void activityIsCpuTimeAndRunnableThreads(@TempDir Path proc) throws Exception {
    Path p = Files.createDirectories(proc.resolve("42"));
    Files.writeString(
        p.resolve("stat"), "42 (java) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 3 0 99 1 1");
    for (String[] t : new String[][] {{"42", "S"}, {"43", "R"}, {"44", "R"}, {"45", "D"}}) {
      Path task = Files.createDirectories(p.resolve("task").resolve(t[0]));
      Files.writeString(
          task.resolve("stat"), t[0] + " (C2 (x)) " + t[1] + " 1 42 42 0 -1 0 0 0 0 0 1 1 0 0");
    }
    Activity a = new ProcProcessTable(proc).activity(42).orElseThrow();
    assertEquals(200, a.cpuTicks());
    assertEquals(2, a.runnableThreads());
    assertEquals(Optional.empty(), new ProcProcessTable(proc).activity(7));
  }

  @Test
  void workingIsTwoPercentOfACpuOrAThreadWaitingForOne() {
    Activity before = new Activity(100, 0, 0);
    long second = 1_000_000_000L;
    assertFalse(new Activity(101, 0, second).workedSince(Optional.of(before)), "1 % of a CPU");
    assertTrue(new Activity(102, 0, second).workedSince(Optional.of(before)), "2 %");
    assertTrue(new Activity(100, 1, second).workedSince(Optional.of(before)), "wants a CPU");
    assertFalse(new Activity(900, 0, second).workedSince(Optional.empty()), "nothing to compare");
    assertTrue(new Activity(900, 1, second).workedSince(Optional.empty()));
  }

  @Test
  void aSleepingOrStoppedProcessDoesNoWorkAndABusyOneDoes() throws Exception {
    ProcProcessTable t = new ProcProcessTable();
    Process sleeper = new ProcessBuilder("sleep", "30").start();
    try {
      Thread.sleep(200); // past its exec
      Optional<Activity> before = t.activity(sleeper.pid());
      Thread.sleep(300);
      assertFalse(t.activity(sleeper.pid()).orElseThrow().workedSince(before), "sleeping");
      new ProcessBuilder("kill", "-STOP", Long.toString(sleeper.pid())).start().waitFor();
      before = t.activity(sleeper.pid());
      Thread.sleep(300);
      assertFalse(t.activity(sleeper.pid()).orElseThrow().workedSince(before), "stopped");
    } finally {
      sleeper.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }
    long me = ProcessHandle.current().pid();
    Optional<Activity> before = t.activity(me);
    long end = System.nanoTime() + 300_000_000L;
    long spin = 0;
    while (System.nanoTime() < end) {
      spin++;
    }
    assertTrue(spin > 0);
    assertTrue(t.activity(me).orElseThrow().workedSince(before), "this test spun a CPU");
  }
}

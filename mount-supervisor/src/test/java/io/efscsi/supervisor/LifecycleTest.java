package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.efscsi.supervisor.Lifecycle.Action;
import io.efscsi.supervisor.Lifecycle.Event;
import io.efscsi.supervisor.Lifecycle.Step;
import io.efscsi.supervisor.ProxyStatus.State;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every state of a proxy (the five states, each with every combination of the retired, moving and
 * crash-looping marks) against every event (those that carry a generation with the current one and
 * with an earlier one, an exit wanted or not and with the supervisor open or closed): the next
 * state and the actions, or the refusal and its reason. The whole table is docs/supervisor.md's
 * "The proxy's life" section; this test fails when the two differ ({@code
 * -Defscsi.docs.update=true} writes it there).
 */
class LifecycleTest {

  static final long GEN = 7;

  record Mark(boolean retired, boolean moving, boolean crashLooping) {
    String label() {
      List<String> l = new ArrayList<>();
      if (retired) {
        l.add("retired");
      }
      if (moving) {
        l.add("moving");
      }
      if (crashLooping) {
        l.add("crash-looping");
      }
      return l.isEmpty() ? "" : " (" + String.join(", ", l) + ")";
    }
  }

  static List<Mark> marks() {
    List<Mark> marks = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      marks.add(new Mark((i & 4) != 0, (i & 2) != 0, (i & 1) != 0));
    }
    return marks;
  }

  /** Every event, each generation-carrying one with the current generation and an earlier one. */
  static List<Event> events() {
    List<Event> e = new ArrayList<>();
    e.add(new Event.Launch());
    e.add(new Event.LaunchFailed());
    for (long g : new long[] {GEN, GEN - 1}) {
      e.add(new Event.Ready(g));
      e.add(new Event.StartFailed(g));
      e.add(new Event.StartTimedOut(g));
      for (boolean wanted : new boolean[] {true, false}) {
        for (boolean closed : new boolean[] {false, true}) {
          e.add(new Event.Exited(g, wanted, closed));
        }
      }
      e.add(new Event.RestartDue(g));
      e.add(new Event.MoveStep(g, false));
      e.add(new Event.MoveStep(g, true));
    }
    e.add(new Event.RestartNow());
    e.add(new Event.RetryLater(true));
    e.add(new Event.RetryLater(false));
    e.add(new Event.Adopted());
    e.add(new Event.Stop());
    e.add(new Event.Stopped());
    e.add(new Event.MoveBegin());
    e.add(new Event.MoveEnd());
    e.add(new Event.CrashLoop());
    e.add(new Event.Healthy());
    return e;
  }

  static String name(Event e) {
    String s = e.toString().replace("Event.", "");
    return s.replace("gen=" + GEN, "gen=current").replace("gen=" + (GEN - 1), "gen=earlier");
  }

  @Test
  void everyStateAgainstEveryEventFollowsTheRules() {
    int cells = 0;
    for (State s : State.values()) {
      for (Mark m : marks()) {
        for (Event e : events()) {
          cells++;
          Lifecycle l = new Lifecycle().with(s, GEN, m.retired(), m.moving(), m.crashLooping());
          Step step = l.on(e);
          String at = s + m.label() + " + " + name(e);
          switch (step) {
            case Step.Refused r -> {
              assertFalse(r.why().isBlank(), at + ": a refusal says why");
              assertEquals(s, l.state(), at + ": a refusal changes nothing");
              assertEquals(GEN, l.generation(), at + ": a refusal changes nothing");
              assertEquals(m.retired(), l.retired(), at);
              assertEquals(m.moving(), l.moving(), at);
              assertEquals(m.crashLooping(), l.crashLooping(), at);
            }
            case Step.Moved mv -> {
              assertEquals(mv.state(), l.state(), at);
              assertTrue(l.generation() >= GEN, at + ": the generation never goes back");
              if (m.retired()) {
                assertTrue(l.retired(), at + ": retired stays retired");
                assertFalse(mv.actions().contains(Action.SPAWN), at + ": a retired proxy spawns");
                assertFalse(
                    mv.actions().contains(Action.SCHEDULE_RESTART)
                        || mv.actions().contains(Action.RUN_RESTART)
                        || mv.actions().contains(Action.RESTART),
                    at + ": a retired proxy restarts");
              }
              if (mv.actions().contains(Action.SPAWN)) {
                assertEquals(State.STARTING, l.state(), at);
                assertEquals(GEN + 1, l.generation(), at + ": each launch is a new generation");
              }
            }
          }
        }
      }
    }
    assertEquals(5 * 8 * events().size(), cells);
  }

  @Test
  void whatAnEarlierProcessReportsIsRefusedWhereverItArrives() {
    for (State s : State.values()) {
      for (Mark m : marks()) {
        for (Event e : events()) {
          if (!name(e).contains("gen=earlier") || e instanceof Event.StartTimedOut) {
            continue;
          }
          Lifecycle l = new Lifecycle().with(s, GEN, m.retired(), m.moving(), m.crashLooping());
          if (!(l.on(e) instanceof Step.Refused)) {
            fail(s + m.label() + " + " + name(e) + " was accepted");
          }
        }
      }
    }
  }

  @Test
  void aProxyThatExitsWhileItIsBeingMovedIsRestartedAndTheMoveIsRefused() {
    Lifecycle l = new Lifecycle().with(State.RUNNING, GEN, false, false, false);
    assertTrue(l.on(new Event.MoveBegin()) instanceof Step.Moved);
    long moveGen = l.generation();
    Step exit = l.on(new Event.Exited(moveGen, true, false));
    assertEquals(
        new Step.Moved(State.BACKOFF, List.of(Action.RECORD_EXIT, Action.SCHEDULE_RESTART)), exit);
    assertTrue(l.on(new Event.MoveStep(moveGen, true)) instanceof Step.Refused, "commit refused");
    l.on(new Event.MoveEnd());
    assertFalse(l.moving());
    Step due = l.on(new Event.RestartDue(l.generation()));
    assertEquals(new Step.Moved(State.BACKOFF, List.of(Action.RESTART)), due);
  }

  @Test
  void theTableInTheDocsIsThisOne() throws IOException {
    Path doc = Path.of(System.getProperty("user.dir")).resolve("../docs/supervisor.md");
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    String begin = "<!-- lifecycle table: LifecycleTest writes it -->\n";
    String end = "<!-- end of the lifecycle table -->";
    int i = text.indexOf(begin);
    int j = text.indexOf(end);
    String table = table();
    if (Boolean.getBoolean("efscsi.docs.update")) {
      String updated =
          i < 0 ? text : text.substring(0, i + begin.length()) + table + text.substring(j);
      Files.writeString(doc, updated, StandardCharsets.UTF_8);
      return;
    }
    assertTrue(i >= 0 && j > i, "docs/supervisor.md has the lifecycle table's markers");
    assertEquals(table, text.substring(i + begin.length(), j), "docs/supervisor.md's table");
  }

  /** One row per state and event, the marks folded in where they change the answer. */
  static String table() {
    StringBuilder b = new StringBuilder();
    b.append("| state | event | next state: actions, or refused (why) |\n|---|---|---|\n");
    for (State s : State.values()) {
      for (Event e : events()) {
        List<String> answers = new ArrayList<>();
        for (Mark m : marks()) {
          Lifecycle l = new Lifecycle().with(s, GEN, m.retired(), m.moving(), m.crashLooping());
          answers.add(describe(l.on(e), l));
        }
        b.append("| ")
            .append(s)
            .append(" | ")
            .append(name(e))
            .append(" | ")
            .append(fold(answers))
            .append(" |\n");
      }
    }
    return b.toString();
  }

  static String describe(Step step, Lifecycle after) {
    return switch (step) {
      case Step.Refused r -> "refused (" + r.why() + ")";
      case Step.Moved m ->
          m.state()
              + (m.actions().isEmpty()
                  ? ""
                  : ": "
                      + m.actions().stream()
                          .map(a -> a.name().toLowerCase().replace('_', ' '))
                          .collect(Collectors.joining(", ")))
              + (after.generation() > GEN ? " (new generation)" : "");
    };
  }

  /**
   * The same answer for every mark: once; otherwise one answer per combination of the marks that
   * change it (a mark that never changes the answer is left out).
   */
  static String fold(List<String> answers) {
    if (answers.stream().distinct().count() == 1) {
      return answers.getFirst();
    }
    List<Mark> marks = marks();
    boolean[] matters = new boolean[3];
    for (int bit = 0; bit < 3; bit++) {
      for (int i = 0; i < answers.size(); i++) {
        if (!answers.get(i).equals(answers.get(i ^ (4 >> bit)))) {
          matters[bit] = true;
        }
      }
    }
    String[] names = {"retired", "moving", "crash-looping"};
    java.util.Map<String, String> byLabel = new java.util.LinkedHashMap<>();
    for (int i = 0; i < answers.size(); i++) {
      Mark m = marks.get(i);
      boolean[] v = {m.retired(), m.moving(), m.crashLooping()};
      List<String> label = new ArrayList<>();
      for (int bit = 0; bit < 3; bit++) {
        if (matters[bit]) {
          label.add((v[bit] ? "" : "not ") + names[bit]);
        }
      }
      byLabel.putIfAbsent(String.join(", ", label), answers.get(i));
    }
    return byLabel.entrySet().stream()
        .map(e -> e.getKey() + ": " + e.getValue())
        .collect(Collectors.joining("; "));
  }
}

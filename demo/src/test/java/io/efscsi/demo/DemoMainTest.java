package io.efscsi.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class DemoMainTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return DemoMain.run(
        List.of(args),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aBadCommandLineExitsTwoNamingWhatWasWrong() {
    assertEquals(2, run("benchmark-controller", "0"));
    assertTrue(err().contains("the number of volumes (1-999999), got [0]"), err());
    err.reset();
    assertEquals(2, run("demo", "--loud"));
    assertTrue(err().contains("unknown flag '--loud' for demo"), err());
    err.reset();
    assertEquals(2, run("lab"));
    assertTrue(err().contains(LabCommand.USAGE + ", got []"), err());
    err.reset();
    assertEquals(2, run("controller"));
    assertTrue(err().contains("accepted commands here: " + DemoMain.COMMANDS), err());
  }

  @Test
  void aotTrainingNamesItsArguments() {
    assertEquals(2, run("aot-training", "both"));
    assertTrue(err().contains(AotTraining.USAGE), err());
  }

  @Test
  void helpListsTheModulesCommands() {
    assertEquals(0, run("demo", "--help"));
    String text = out.toString(StandardCharsets.UTF_8);
    for (String c : List.of("demo", "benchmark-controller", "aot-training", "lab DIR")) {
      assertTrue(text.contains(c), text);
    }
  }
}

package io.efscsi.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MainTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return Main.run(
        List.of(args),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        Map.of());
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void unknownFlagExitsTwoNamingItAndListingTheAccepted() {
    assertEquals(2, run("node", "--mode=node"));
    assertTrue(err().contains("unknown flag '--mode'"), err());
    assertTrue(err().contains("--endpoint"), err());
    assertTrue(err().contains("--delete-access-point-root-dir"), err());
  }

  @Test
  void badValueExitsTwoNamingFlagAndValue() {
    assertEquals(2, run("controller", "--adaptive-retry-mode=maybe"));
    assertTrue(
        err()
            .contains(
                "invalid value 'maybe' for flag '--adaptive-retry-mode': expected true or false"),
        err());
    err.reset();
    assertEquals(2, run("node", "--endpoint=ftp://x"));
    assertTrue(err().contains("invalid endpoint 'ftp://x'"), err());
  }

  @Test
  void noCommandMeansAllLikeTheGoDriverSoItsArgsWork() {
    // the Go driver's args with a bad value: parsed as flags (exit 2 for the value), not as a
    // command
    assertEquals(2, run("--endpoint=unix:/csi/csi.sock", "--v=x"));
    assertTrue(err().contains("'--v'"), err());
  }

  @Test
  void unknownCommandListsTheCommands() {
    assertEquals(2, run("frobnicate"));
    assertTrue(
        err().contains("unknown command 'frobnicate'; accepted commands: " + Main.COMMANDS), err());
  }

  @Test
  void versionPrintsGoShapedJson() {
    assertEquals(0, run("version"));
    String json = out.toString(StandardCharsets.UTF_8);
    for (String key : List.of("driverVersion", "gitCommit", "buildDate", "platform")) {
      assertTrue(json.contains("\"" + key + "\": \""), json);
    }
  }

  @Test
  void theDemoModulesCommandsAreNotTheLaunchers() {
    assertEquals(2, run("demo", "--quiet"));
    assertTrue(
        err().contains("demo runs through bin/efs-csi demo, with the demo module (lib/demo/)"),
        err());
  }

  @Test
  void anUnknownCommandIsABadCommandLineAlsoWithHelp() {
    assertEquals(2, run("frobnicate", "--help"));
    assertTrue(
        err().contains("unknown command 'frobnicate'; accepted commands: " + Main.COMMANDS), err());
    assertEquals(0, run("handback", "--help"), "a known command's help");
  }

  @Test
  void theReadmesLauncherSectionNamesEveryCommandOfTheUsage() throws Exception {
    String readme = java.nio.file.Files.readString(java.nio.file.Path.of("..", "README.md"));
    String section = readme.substring(readme.indexOf("## The launcher"));
    section = section.substring(0, section.indexOf("\n## ", 1));
    for (String command : Main.COMMANDS.split(",\\s*")) {
      assertTrue(
          section.contains(" " + command + " ")
              || section.contains("|" + command)
              || section.contains(command + "|"),
          "README's launcher section names " + command);
    }
  }

  @Test
  void helpListsCommandsAndFlags() {
    assertEquals(0, run("--help"));
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("controller") && text.contains("--vol-metrics-opt-in"), text);
  }
}

package io.efscsi.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FlagSetTest {

  private final FlagSet set =
      new FlagSet()
          .add(Flag.string("endpoint", "unix://tmp/csi.sock", ""))
          .add(Flag.bool("vol-metrics-opt-in", false, ""))
          .add(Flag.integer("v", 2, ""))
          .add(Flag.number("vol-metrics-refresh-period", 240, ""))
          .add(Flag.duration("unmount-timeout", "30s", ""));

  @Test
  void goSyntaxFromTheUpstreamManifests() throws UsageException {
    Flags f =
        set.parse(
            List.of(
                "--endpoint=unix:/csi/csi.sock",
                "-v=2",
                "--vol-metrics-opt-in",
                "--unmount-timeout",
                "45s",
                "-vol-metrics-refresh-period=30.5"));
    assertEquals("unix:/csi/csi.sock", f.string("endpoint"));
    assertEquals(2, f.integer("v"));
    assertTrue(f.bool("vol-metrics-opt-in"));
    assertEquals(Duration.ofSeconds(45), f.duration("unmount-timeout"));
    assertEquals(30.5, f.number("vol-metrics-refresh-period"));
    assertTrue(f.isSet("endpoint"));
  }

  @Test
  void defaultsApplyWhenAbsent() throws UsageException {
    Flags f = set.parse(List.of());
    assertEquals("unix://tmp/csi.sock", f.string("endpoint"));
    assertFalse(f.bool("vol-metrics-opt-in"));
    assertEquals(Duration.ofSeconds(30), f.duration("unmount-timeout"));
    assertFalse(f.isSet("endpoint"));
  }

  @ParameterizedTest
  @CsvSource({
    "--vol-metrics-opt-in=false, false",
    "--vol-metrics-opt-in=1, true",
    "--vol-metrics-opt-in=F, false"
  })
  void booleansTakeGoForms(String arg, boolean expected) throws UsageException {
    assertEquals(expected, set.parse(List.of(arg)).bool("vol-metrics-opt-in"));
  }

  @Test
  void lastOccurrenceWins() throws UsageException {
    assertEquals(5, set.parse(List.of("--v=1", "--v=5")).integer("v"));
  }

  @Test
  void unknownFlagIsNamedWithTheAcceptedList() {
    UsageException e = assertThrows(UsageException.class, () -> set.parse(List.of("--mode=node")));
    assertTrue(e.getMessage().startsWith("unknown flag '--mode'"), e.getMessage());
    assertTrue(e.getMessage().contains("--endpoint, --unmount-timeout, --v"), e.getMessage());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--v=two|invalid value 'two' for flag '--v': expected an integer",
        "--vol-metrics-opt-in=yes|invalid value 'yes' for flag '--vol-metrics-opt-in': expected true or false",
        "--unmount-timeout=30|invalid value '30' for flag '--unmount-timeout': expected a duration",
        "--vol-metrics-refresh-period=x|invalid value 'x' for flag '--vol-metrics-refresh-period': expected a number",
      })
  void badValuesNameFlagValueAndWhatIsAccepted(String arg, String message) {
    UsageException e = assertThrows(UsageException.class, () -> set.parse(List.of(arg)));
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
  }

  @Test
  void missingValueAndStrayArgumentsAreRefused() {
    assertTrue(
        assertThrows(UsageException.class, () -> set.parse(List.of("--endpoint")))
            .getMessage()
            .contains("needs a value"));
    assertTrue(
        assertThrows(UsageException.class, () -> set.parse(List.of("stray")))
            .getMessage()
            .contains("unexpected argument 'stray'"));
    assertTrue(
        assertThrows(UsageException.class, () -> set.parse(List.of("--", "x")))
            .getMessage()
            .contains("unexpected argument 'x'"));
  }

  @Test
  void mapBuiltFlagsAreCheckedToo() throws UsageException {
    assertEquals(7, Flags.of(set, Map.of("v", "7")).integer("v"));
    assertThrows(UsageException.class, () -> Flags.of(set, Map.of("v", "x")));
    assertThrows(UsageException.class, () -> Flags.of(set, Map.of("nope", "x")));
  }

  @Test
  void definingAFlagTwiceIsAProgrammingError() {
    assertThrows(IllegalStateException.class, () -> set.add(Flag.integer("v", 1, "")));
  }
}

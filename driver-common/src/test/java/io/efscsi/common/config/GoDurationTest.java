package io.efscsi.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {

  @ParameterizedTest
  @CsvSource({
    "30s, 30000",
    "0, 0",
    "250ms, 250",
    "1m30s, 90000",
    "1h, 3600000",
    "1.5s, 1500",
    "2h45m, 9900000",
    "-5s, -5000",
    "1500us, 1"
  })
  void parsesGoDurations(String text, long millis) {
    assertEquals(
        Duration.ofMillis(millis),
        GoDuration.parse(text).truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "30", "s", "1d", "1m30", "abc", "1 s", "--1s"})
  void rejectsEverythingElse(String text) {
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse(text));
  }

  /** Found by GoDurationFuzzTest (against a port of Go's ParseDuration): the double sum was off. */
  @ParameterizedTest
  @CsvSource({
    "16.77697ms, 16776970",
    "2.01s, 2010000000",
    "1\u03bcs, 1000",
    "1\u00b5s, 1000",
    "1.000000001s, 1000000001",
    "2562047h47m16.854775807s, 9223372036854775807",
    "-2562047h47m16.854775808s, -9223372036854775808",
    "9007199254740993ns, 9007199254740993"
  })
  void readsToTheNanosecondAsGoDoes(String text, long nanos) {
    assertEquals(Duration.ofNanos(nanos), GoDuration.parse(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"2562047h47m16.854775808s", "9999999999h", "-9223372036854775809ns"})
  void refusesWhatGoCannotHold(String text) {
    assertEquals(
        "duration out of range: " + text,
        assertThrows(IllegalArgumentException.class, () -> GoDuration.parse(text)).getMessage());
  }
}

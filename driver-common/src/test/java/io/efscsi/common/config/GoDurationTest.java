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
}

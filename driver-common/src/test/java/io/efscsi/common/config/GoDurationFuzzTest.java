package io.efscsi.common.config;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.code_intelligence.jazzer.mutation.annotation.NotNull;

/**
 * Any duration flag value ({@code --unmount-timeout=…}, {@code --timeout=…}) parses or is refused
 * with IllegalArgumentException, which the flag parser turns into exit code 2 and a message.
 */
class GoDurationFuzzTest {

  @FuzzTest(maxDuration = "20s")
  void anyDurationParsesOrIsIllegalArgument(@NotNull String text) {
    try {
      GoDuration.parse(text);
    } catch (IllegalArgumentException refused) {
      if (refused.getMessage() == null || refused.getMessage().isBlank()) {
        throw new AssertionError("a refusal without a message", refused);
      }
    }
  }
}

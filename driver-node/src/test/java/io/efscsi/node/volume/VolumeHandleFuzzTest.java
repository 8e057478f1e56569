package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.code_intelligence.jazzer.mutation.annotation.NotNull;
import io.efscsi.common.error.DriverException;

/** Any volume id parses or is INVALID_ARGUMENT with a message; never another failure. */
class VolumeHandleFuzzTest {

  @FuzzTest(maxDuration = "20s")
  void anyVolumeIdParsesOrIsInvalidArgument(@NotNull String volumeId) {
    try {
      VolumeHandle.parse(volumeId);
    } catch (DriverException e) {
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind(), e.getMessage());
      FuzzChecks.clear(e);
    }
  }
}

package io.efscsi.supervisor.mounts;

import com.code_intelligence.jazzer.junit.FuzzTest;

/** Whatever the mount table holds, the parser answers with mounts or a clear refusal. */
class MountInfoParserFuzzTest {

  @FuzzTest(maxDuration = "20s")
  void anyTableParsesOrIsRefusedClearly(byte[] data) {
    String table = new String(data, java.nio.charset.StandardCharsets.UTF_8);
    try {
      for (MountInfo m : MountInfoParser.parse(table)) {
        m.loopbackPort();
      }
    } catch (IllegalArgumentException e) {
      if (e.getMessage() == null || !e.getMessage().startsWith("mountinfo line ")) {
        throw new AssertionError("unclear refusal: " + e.getMessage(), e);
      }
    }
  }
}

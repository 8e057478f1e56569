package io.efscsi.supervisor.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.code_intelligence.jazzer.mutation.annotation.NotNull;

/**
 * A state record on the host may be torn, hand-edited or written by another version: it parses into
 * a record that writes back to itself, or it is refused with the exceptions {@link StateStore} sets
 * aside (never another one, which would stop the supervisor's start).
 */
class ProxyRecordFuzzTest {

  @FuzzTest(maxDuration = "20s")
  void anyRecordParsesOrIsRefusedAsTheStoreExpects(@NotNull String text) {
    ProxyRecord r;
    try {
      r = ProxyRecord.fromJson(text);
    } catch (IllegalArgumentException | ArithmeticException refused) {
      return;
    }
    assertEquals(r, ProxyRecord.fromJson(r.toJson()));
  }
}

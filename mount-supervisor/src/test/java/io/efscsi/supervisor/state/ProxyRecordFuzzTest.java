package io.efscsi.supervisor.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A state record on the host may be torn, hand-edited or written by another version:
 *
 * <ul>
 *   <li>any record this build writes is read back as itself (ids, keys, config and users of any
 *       characters, any numbers);
 *   <li>any text parses into a record that writes back to itself and has a valid id and port, or it
 *       is refused with the exceptions {@link StateStore} sets aside (never another one, which
 *       would stop the supervisor's start).
 * </ul>
 */
class ProxyRecordFuzzTest {

  private static final String ID_CHARS =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 90_000)
  @DictionaryEntries({
    "\"version\": 1",
    "\"id\": ",
    "\"key\": ",
    "\"port\": ",
    "\"pid\": ",
    "\"startTicks\": ",
    "\"cgroup\": ",
    "\"config\": {",
    "\"users\": [",
    "\"restarts\": ",
    "\"createdMillis\": ",
    "\"minReader\": ",
    "\"proxyBuild\": ",
    "\"move\": {\"phase\": \"retiring\", "
  })
  void anyRecordRoundTripsOrIsRefusedAsTheStoreExpects(FuzzedDataProvider data) {
    ProxyRecord generated = record(data);
    assertEquals(generated, ProxyRecord.fromJson(generated.toJson()), generated::toJson);

    String text = new String(data.consumeRemainingAsBytes(), StandardCharsets.UTF_8);
    ProxyRecord r;
    try {
      r = ProxyRecord.fromJson(text);
    } catch (IllegalArgumentException | ArithmeticException refused) {
      return;
    }
    assertTrue(r.id().matches("[A-Za-z0-9._-]{1,64}") && r.port() >= 1 && r.port() <= 65535, text);
    assertEquals(r, ProxyRecord.fromJson(r.toJson()), text);
  }

  private static ProxyRecord record(FuzzedDataProvider data) {
    StringBuilder id = new StringBuilder();
    for (int n = data.consumeInt(1, 64); n > 0; n--) {
      id.append(ID_CHARS.charAt(data.consumeInt(0, ID_CHARS.length() - 1)));
    }
    Map<String, String> config = new HashMap<>();
    for (int n = data.consumeInt(0, 3); n > 0; n--) {
      config.put(data.consumeString(12), data.consumeString(24));
    }
    Set<String> users = new HashSet<>();
    for (int n = data.consumeInt(0, 3); n > 0; n--) {
      users.add(data.consumeString(48));
    }
    return new ProxyRecord(
        id.toString(),
        data.consumeString(48),
        data.consumeInt(1, 65535),
        data.consumeLong(),
        data.consumeLong(),
        data.consumeString(24),
        config,
        users,
        data.consumeLong(),
        data.consumeLong(),
        data.consumeString(16),
        data.consumeBoolean()
            ? java.util.Optional.of(
                new ProxyRecord.Move(
                    data.consumeBoolean() ? ProxyRecord.Move.LAUNCHING : ProxyRecord.Move.RETIRING,
                    data.consumeLong(),
                    data.consumeLong(),
                    data.consumeString(24)))
            : java.util.Optional.empty());
  }
}

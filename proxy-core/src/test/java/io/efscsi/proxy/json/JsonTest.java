package io.efscsi.proxy.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

  private static String arrays(int depth) {
    return "[".repeat(depth) + "]".repeat(depth);
  }

  private static String objects(int depth) {
    return "{\"a\": ".repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
  }

  @Test
  void nestingUpToTheLimitParses() {
    Object v = Json.parse(arrays(Json.MAX_DEPTH));
    for (int d = 1; d < Json.MAX_DEPTH; d++) {
      v = ((List<?>) v).get(0);
    }
    assertEquals(List.of(), v);
    Object o = Json.parse(objects(Json.MAX_DEPTH));
    for (int d = 1; d < Json.MAX_DEPTH; d++) {
      o = ((Map<?, ?>) o).get("a");
    }
    assertEquals(Map.of(), o);
  }

  @Test
  void oneLevelDeeperIsTheNormalParseError() {
    for (String text :
        List.of(
            arrays(Json.MAX_DEPTH + 1),
            objects(Json.MAX_DEPTH + 1),
            "[{\"a\": ".repeat(Json.MAX_DEPTH / 2) + "[]")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Json.parse(text));
      assertTrue(
          e.getMessage().startsWith("invalid JSON at offset ")
              && e.getMessage().endsWith("nested deeper than the limit of " + Json.MAX_DEPTH),
          e.getMessage());
    }
    assertEquals(
        "invalid JSON at offset 64: objects and arrays nested deeper than the limit of 64",
        assertThrows(IllegalArgumentException.class, () -> Json.parse(arrays(65))).getMessage(),
        "the offset is the bracket one too deep");
  }

  @Test
  void aHostileDepthIsRefusedWithoutExhaustingTheStack() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Json.parse("[".repeat(100_000)));
    assertTrue(e.getMessage().contains("nested deeper than the limit of 64"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class, () -> Json.parse("{\"k\":".repeat(100_000) + "1"));
    assertTrue(e.getMessage().contains("nested deeper than the limit of 64"), e.getMessage());
  }

  @Test
  void siblingsDoNotAddUp() {
    String wide = "[" + String.join(", ", java.util.Collections.nCopies(200, arrays(63))) + "]";
    assertEquals(200, ((List<?>) Json.parse(wide)).size());
  }

  /**
   * Where JsonFuzzTest's reference refuses: Integer.parseInt took a sign, Long.parseLong any digit.
   */
  @Test
  void escapesAndNumbersAreAsciiOnly() {
    assertEquals("A\u00e9", Json.parse("\"\\u0041\\u00E9\""));
    for (String text :
        List.of("\"\\u-123\"", "\"\\u+041\"", "\"\\u\uff10\uff10\uff14\uff11\"", "[6\u0665]")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Json.parse(text), text);
      assertTrue(e.getMessage().startsWith("invalid JSON at offset "), e.getMessage());
    }
  }

  @Test
  void aControlAnswerIsOneLineWithFractionsKept() {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("port", 20049);
    m.put("backpressure_paused_seconds", 0.25);
    m.put("last_error", null);
    m.put("nan", Double.NaN);
    m.put("users", List.of("a\nb", "c"));
    String line = Json.line(m);
    assertEquals(
        "{\"port\":20049,\"backpressure_paused_seconds\":0.25,\"last_error\":null,"
            + "\"nan\":null,\"users\":[\"a\\nb\",\"c\"]}",
        line);
    assertEquals(Json.parse(Json.write(m)), Json.parse(line), "the same value either way");
  }
}

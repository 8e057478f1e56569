package io.efscsi.node.takeover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The tunnel config efs-utils writes for stunnel and efs-proxy alike ({@code
 * stunnel-config.<stem>}), which the takeover reads from the host:
 *
 * <ul>
 *   <li>any config written as efs-utils writes it ({@code key = value} lines, globals, then {@code
 *       [efs]}; values of any characters but a line break) reads back key by key;
 *   <li>any text is read as a naive section reader in this test reads it (every key's single value,
 *       a repeated key refused on lookup), or refused by both with a reason.
 * </ul>
 */
class StunnelConfigFuzzTest {

  private static final String[] KEYS = {
    "fips",
    "foreground",
    "socket",
    "pid",
    "client",
    "accept",
    "connect",
    "verify",
    "CAfile",
    "cert",
    "key",
    "checkHost",
    "fs_id",
    "region",
    "OCSPaia"
  };

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 75_000)
  @DictionaryEntries({"[efs]", " = ", "accept", "connect", "#", ";"})
  void anyConfigIsReadAsTheReferenceReadsIt(FuzzedDataProvider data) throws Exception {
    Map<String, List<String>> global = entries(data);
    Map<String, List<String>> efs = entries(data);
    StunnelConfig written = StunnelConfig.parse(write(global, efs));
    assertReadAs(global, efs, written);

    String text = new String(data.consumeRemainingAsBytes(), StandardCharsets.UTF_8);
    Map<String, Map<String, List<String>>> expected = reference(text);
    StunnelConfig got;
    try {
      got = StunnelConfig.parse(text);
    } catch (UnusableStateException e) {
      assertTrue(e.getMessage() != null && e.getMessage().startsWith("the tunnel config "));
      assertNull(expected, () -> "refused " + text + ": " + e.getMessage());
      return;
    }
    assertNotNull(expected, () -> "read what the reference refuses: " + text);
    assertReadAs(expected.get(""), expected.get("efs"), got);
  }

  private static Map<String, List<String>> entries(FuzzedDataProvider data) {
    Map<String, List<String>> m = new LinkedHashMap<>();
    for (int n = data.consumeInt(0, 4); n > 0; n--) {
      String key = data.consumeBoolean() ? data.pickValue(KEYS) : data.consumeString(12).strip();
      if (key.isEmpty() || "#;[".indexOf(key.charAt(0)) >= 0 || key.matches("(?s).*[=\r\n].*")) {
        continue; // efs-utils' keys are words
      }
      String value = data.consumeString(40).replaceAll("[\r\n]", "").strip();
      m.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
    }
    return m;
  }

  /** As efs-utils' write_stunnel_config_file serialises it. */
  private static String write(Map<String, List<String>> global, Map<String, List<String>> efs) {
    List<String> lines = new ArrayList<>();
    global.forEach((k, vs) -> vs.forEach(v -> lines.add(k + " = " + v)));
    lines.add("[efs]");
    efs.forEach((k, vs) -> vs.forEach(v -> lines.add(k + " = " + v)));
    return String.join("\n", lines);
  }

  private static void assertReadAs(
      Map<String, List<String>> global, Map<String, List<String>> efs, StunnelConfig cfg) {
    Set<String> keys = new LinkedHashSet<>(List.of(KEYS));
    keys.addAll(global.keySet());
    keys.addAll(efs.keySet());
    for (String k : keys) {
      assertEquals(single(global.get(k)), lookup(() -> cfg.global(k)), "global " + k);
      assertEquals(single(efs.get(k)), lookup(() -> cfg.efs(k)), "[efs] " + k);
    }
  }

  /** The one value, none, or "twice" when a key repeats. */
  private static String single(List<String> values) {
    if (values == null) {
      return null;
    }
    return values.size() > 1 ? "twice" : values.get(0);
  }

  private interface Lookup {
    Optional<String> get() throws UnusableStateException;
  }

  private static String lookup(Lookup l) {
    try {
      return l.get().orElse(null);
    } catch (UnusableStateException e) {
      assertTrue(e.getMessage().endsWith(" twice"), e.getMessage());
      return "twice";
    }
  }

  /**
   * Lines; blank ones and {@code #} or {@code ;} comments skipped; {@code [efs]} once, switching
   * from the globals to the section; every other line {@code key = value} split at its first {@code
   * =}, both sides stripped. Null when a line is none of these or there is no {@code [efs]}.
   */
  private static Map<String, Map<String, List<String>>> reference(String text) {
    Map<String, Map<String, List<String>>> sections = new LinkedHashMap<>();
    sections.put("", new LinkedHashMap<>());
    String section = "";
    for (String line : text.split("\n")) {
      String l = line.strip();
      if (l.isEmpty() || l.startsWith("#") || l.startsWith(";")) {
        continue;
      }
      if (l.startsWith("[") && l.endsWith("]") && l.length() >= 2) {
        String name = l.substring(1, l.length() - 1).strip();
        if (!name.equals("efs") || sections.containsKey("efs")) {
          return null;
        }
        section = "efs";
        sections.put("efs", new LinkedHashMap<>());
        continue;
      }
      String[] kv = l.split("=", 2);
      if (kv.length < 2 || kv[0].strip().isEmpty()) {
        return null;
      }
      sections
          .get(section)
          .computeIfAbsent(kv[0].strip(), k -> new ArrayList<>())
          .add(kv[1].strip());
    }
    return sections.containsKey("efs") ? sections : null;
  }
}

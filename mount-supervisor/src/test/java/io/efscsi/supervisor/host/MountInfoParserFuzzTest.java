package io.efscsi.supervisor.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The mount table, as proc(5) describes it:
 *
 * <ul>
 *   <li>any mount, written as the kernel writes it (octal escapes for space, tab, newline and
 *       backslash in the path and name fields), is read back as itself;
 *   <li>any table is read as a plain split-on-spaces reader in this test reads it, or refused by
 *       both, the refusal naming the line;
 *   <li>a loopback NFS mount's port, when read, is a port (0-65535) written in decimal.
 * </ul>
 */
class MountInfoParserFuzzTest {

  private static final String[] OPTIONAL = {
    "shared:1", "master:7", "propagate_from:2", "unbindable"
  };

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 45_000)
  @DictionaryEntries({
    " - ",
    "\\040",
    "\\011",
    "\\012",
    "\\134",
    " / ",
    " nfs4 ",
    "addr=127.0.0.1",
    ",port="
  })
  void anyTableReadsAsTheKernelWroteIt(FuzzedDataProvider data) {
    MountInfo m = mount(data);
    List<MountInfo> read = MountInfoParser.parse(kernelLine(m) + "\n");
    assertEquals(List.of(m), read, () -> visible(m + "\n read as " + read));
    portIsAPort(m);

    String table = new String(data.consumeRemainingAsBytes(), StandardCharsets.UTF_8);
    List<MountInfo> expected = reference(table);
    List<MountInfo> got;
    try {
      got = MountInfoParser.parse(table);
    } catch (IllegalArgumentException e) {
      if (e.getMessage() == null || !e.getMessage().startsWith("mountinfo line ")) {
        throw new AssertionError("a refusal that names no line: " + e.getMessage(), e);
      }
      assertEquals(null, expected, () -> visible("refused " + table + ": " + e.getMessage()));
      return;
    }
    assertEquals(
        expected,
        got,
        () -> visible("read differently from the reference: " + table + " as " + got));
    got.forEach(MountInfoParserFuzzTest::portIsAPort);
  }

  /** A port read from a loopback mount is a port, written in decimal as the kernel writes it. */
  private static void portIsAPort(MountInfo m) {
    m.loopbackPort()
        .ifPresent(p ->
            assertTrue(
                p >= 0 && p <= 65535 && m.superOption("port").get().matches("0*" + p),
                () -> visible("a loopback port that is no port: " + m.superOptions())));
  }

  private static MountInfo mount(FuzzedDataProvider data) {
    List<String> optional = new ArrayList<>();
    for (int n = data.consumeInt(0, 2); n > 0; n--) {
      optional.add(data.pickValue(OPTIONAL));
    }
    return new MountInfo(
        data.consumeInt(0, Integer.MAX_VALUE),
        data.consumeInt(0, Integer.MAX_VALUE),
        data.consumeInt(0, 4095) + ":" + data.consumeInt(0, 1 << 20),
        "/" + data.consumeString(16),
        "/" + data.consumeString(32),
        data.pickValue(new String[] {"rw", "ro,relatime", "rw,nosuid,nodev"}),
        optional,
        data.consumeBoolean() ? "nfs4" : nonEmpty(data.consumeString(8), "nfs"),
        data.consumeString(24),
        data.consumeBoolean()
            ? "rw,vers=4.1,addr=127.0.0.1,port=" + data.consumeString(6)
            : nonEmpty(data.consumeString(48), "rw"));
  }

  /** Characters other than printable ASCII as {@code \\uXXXX}, for the failure message. */
  static String visible(String s) {
    StringBuilder sb = new StringBuilder();
    for (char c : s.toCharArray()) {
      sb.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c));
    }
    return sb.toString();
  }

  private static String nonEmpty(String s, String otherwise) {
    return s.isEmpty() ? otherwise : s;
  }

  /** A line as fs/proc_namespace.c's show_mountinfo writes it. */
  private static String kernelLine(MountInfo m) {
    List<String> f = new ArrayList<>();
    f.add(Integer.toString(m.mountId()));
    f.add(Integer.toString(m.parentId()));
    f.add(m.device());
    f.add(mangle(m.root()));
    f.add(mangle(m.mountPoint()));
    f.add(m.mountOptions());
    f.addAll(m.optionalFields());
    f.add("-");
    f.add(mangle(m.fsType()));
    f.add(mangle(m.source()));
    f.add(mangle(m.superOptions()));
    return String.join(" ", f);
  }

  /** The kernel's {@code mangle}: space, tab, newline and backslash as three octal digits. */
  private static String mangle(String s) {
    StringBuilder sb = new StringBuilder();
    for (char c : s.toCharArray()) {
      if (" \t\n\\".indexOf(c) >= 0) {
        sb.append('\\').append((char) ('0' + (c >> 6))).append((char) ('0' + ((c >> 3) & 7)));
        sb.append((char) ('0' + (c & 7)));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  private static final Pattern ID = Pattern.compile("[0-9]+");
  private static final Pattern OCTAL = Pattern.compile("\\\\[0-7]{3}");

  /**
   * proc(5) read plainly: fields split on single spaces; six fixed fields, optional fields up to
   * the first {@code -} after them, then fstype, source and (possibly empty) super options; ids are
   * decimal ints; blank lines are skipped. Null when a line is not of that shape.
   */
  private static List<MountInfo> reference(String table) {
    List<MountInfo> out = new ArrayList<>();
    for (String line : table.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      List<String> f = Arrays.asList(line.split(" "));
      int sep = f.size() > 6 ? f.subList(6, f.size()).indexOf("-") + 6 : -1;
      if (sep < 6 || f.size() < sep + 3 || !isId(f.get(0)) || !isId(f.get(1))) {
        return null;
      }
      out.add(
          new MountInfo(
              Integer.parseInt(f.get(0)),
              Integer.parseInt(f.get(1)),
              f.get(2),
              unmangle(f.get(3)),
              unmangle(f.get(4)),
              f.get(5),
              f.subList(6, sep),
              unmangle(f.get(sep + 1)),
              unmangle(f.get(sep + 2)),
              f.size() > sep + 3 ? unmangle(f.get(sep + 3)) : ""));
    }
    return out;
  }

  private static boolean isId(String s) {
    return ID.matcher(s).matches()
        && new BigInteger(s).compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) <= 0;
  }

  private static String unmangle(String s) {
    Matcher m = OCTAL.matcher(s);
    return m.replaceAll(
        r -> Matcher.quoteReplacement(String.valueOf((char) Integer.parseInt(r.group(), 1, 4, 8))));
  }
}

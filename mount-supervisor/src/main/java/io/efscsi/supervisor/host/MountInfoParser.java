package io.efscsi.supervisor.host;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Parses {@code /proc/<pid>/mountinfo}. Format (proc(5)): {@code id parent major:minor root
 * mount-point mount-options [optional-fields…] - fstype source super-options}; spaces, tabs,
 * newlines and backslashes inside fields are written as octal escapes ({@code \040}).
 */
public final class MountInfoParser {

  private MountInfoParser() {}

  /** Parses the whole table; malformed lines are refused with their number and content. */
  public static List<MountInfo> parse(String content) {
    List<MountInfo> out = new ArrayList<>();
    int lineNo = 0;
    for (String line : content.split("\n")) {
      lineNo++;
      if (line.isBlank()) {
        continue;
      }
      out.add(parseLine(line, lineNo));
    }
    return out;
  }

  /** Parses one line; {@code lineNo} is only for the error message. */
  public static MountInfo parseLine(String line, int lineNo) {
    String[] f = line.split(" "); // not strip(): a last field may end in what it removes ("\r")
    // the first "-" after the six fixed fields (a root, mount point or option may be "-" too)
    int sep = f.length > 6 ? 6 + Arrays.asList(f).subList(6, f.length).indexOf("-") : -1;
    if (sep < 6 || f.length < sep + 3) {
      throw new IllegalArgumentException(
          "mountinfo line "
              + lineNo
              + " is malformed (want 'id parent dev root mount-point"
              + " options [fields] - fstype source super-options'): "
              + line);
    }
    try {
      return new MountInfo(
          id(f[0]),
          id(f[1]),
          f[2],
          unescape(f[3]),
          unescape(f[4]),
          f[5],
          List.of(Arrays.copyOfRange(f, 6, sep)),
          unescape(f[sep + 1]),
          unescape(f[sep + 2]),
          f.length > sep + 3 ? unescape(f[sep + 3]) : "");
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "mountinfo line " + lineNo + " has a non-numeric mount id: " + line, e);
    }
  }

  /** A decimal id as the kernel writes it (Integer.parseInt alone also takes "+1" and "-1"). */
  private static int id(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        throw new NumberFormatException(s);
      }
    }
    return Integer.parseInt(s);
  }

  /** Decodes the kernel's octal escapes ({@code \040} space, {@code \011} tab, {@code \134} \). */
  public static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && isOctal(s, i + 1)) {
        sb.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /** The inverse of {@link #unescape}, as the kernel writes it. */
  public static String escape(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
        sb.append('\\').append(String.format("%03o", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  private static boolean isOctal(String s, int from) {
    if (from + 3 > s.length()) {
      return false;
    }
    for (int i = from; i < from + 3; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '7') {
        return false;
      }
    }
    return true;
  }
}

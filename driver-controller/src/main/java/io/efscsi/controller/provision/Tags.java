package io.efscsi.controller.provision;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --tags}: space-separated {@code key:value} pairs, split at the first unescaped colon;
 * {@code \:}, {@code \ } and {@code \\} escape a colon, a space and a backslash, as in the Go
 * driver. Pairs it cannot read (no colon, empty key) are skipped and reported, as the Go driver
 * skips them.
 */
public record Tags(Map<String, String> values, List<String> skipped) {

  public static final String CLUSTER_KEY = "efs.csi.aws.com/cluster";
  public static final String PV_NAME_KEY = "kubernetes.io/created-for/pv/name";
  public static final String PVC_NAME_KEY = "kubernetes.io/created-for/pvc/name";
  public static final String PVC_NAMESPACE_KEY = "kubernetes.io/created-for/pvc/namespace";

  /**
   * The basePath an access point was provisioned under (ours; absent when it is {@code /}): {@code
   * --delete-access-point-root-dir} never removes a directory that is not strictly below it.
   */
  public static final String BASE_PATH_KEY = "efs.csi.aws.com/base-path";

  /**
   * The capacity a CreateVolume asked for (ours, in bytes): a retry of the same name with another
   * capacity is ALREADY_EXISTS, as the CSI spec asks, although EFS itself has no capacity.
   */
  public static final String CAPACITY_KEY = "efs.csi.aws.com/requested-capacity-bytes";

  /**
   * The StorageClass's {@code onDelete} (ours: delete, retain or archive; absent when it did not
   * say): DeleteVolume reads it back from the access point ({@link OnDelete}).
   */
  public static final String ON_DELETE_KEY = "efs.csi.aws.com/on-delete";

  /** What EFS accepts as a tag value. */
  public static boolean validValue(String v) {
    return v.length() <= 256 && v.matches("[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*");
  }

  public static Tags parse(String raw) {
    Map<String, String> values = new LinkedHashMap<>();
    List<String> skipped = new ArrayList<>();
    for (String pair : split(raw, ' ')) {
      List<String> kv = split(pair, ':');
      String rawPair = pair;
      if (kv.size() < 2 || unescape(kv.getFirst()).isEmpty()) {
        skipped.add(unescape(rawPair));
        continue;
      }
      int colon = firstUnescaped(pair, ':');
      values.put(unescape(pair.substring(0, colon)), unescape(pair.substring(colon + 1)));
    }
    return new Tags(Collections.unmodifiableMap(values), List.copyOf(skipped));
  }

  /** Splits at unescaped {@code sep}, keeping escapes for the next step; drops empty parts. */
  private static List<String> split(String s, char sep) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        cur.append(c).append(s.charAt(++i));
      } else if (c == sep) {
        if (!cur.isEmpty()) {
          out.add(cur.toString());
        }
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    if (!cur.isEmpty()) {
      out.add(cur.toString());
    }
    return out;
  }

  private static int firstUnescaped(String s, char c) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) == '\\') {
        i++;
      } else if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private static String unescape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        c = s.charAt(++i);
      }
      b.append(c);
    }
    return b.toString();
  }
}

package io.efscsi.node.volume;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Options for {@code mount -t nfs4}: checking one option and merging lists where a later value of
 * the same option replaces the earlier one in place. "The same option" is the name before {@code
 * =}, with {@code nfsvers}/{@code vers}, {@code soft}/{@code hard}/{@code softerr}, {@code
 * ro}/{@code rw}, {@code sync}/{@code async} and {@code X}/{@code noX} each counted as one.
 *
 * <p>mount(8) acts on some options itself instead of handing them to the file system: those that
 * change what the mount is or where it goes (a bind or move instead of an NFS mount, a remount,
 * propagation, a loop device, {@code X-mount.*} steps such as mkdir, chown or a subdirectory), that
 * run a program ({@code helper=}, {@code uhelper=}) or that let users other than root mount or
 * unmount it. {@link #refusal} names them; everything else an NFS mount takes ({@code noatime},
 * {@code nosuid}, {@code nodev}, {@code noexec}, {@code lazytime}, {@code context=}, …) passes.
 */
final class NfsOptions {

  private static final Pattern NAME = Pattern.compile("[a-z0-9_][a-z0-9_-]*");
  private static final Set<String> POSITIVE_INTEGERS = Set.of("rsize", "wsize", "timeo");
  private static final Set<String> VERSIONS = Set.of("4", "4.0", "4.1");

  private static final String BIND =
      "it makes mount(8) bind another path instead of mounting the volume; the node binds the"
          + " staged volume into each pod itself";
  private static final String MOVE =
      "it makes mount(8) change or move an existing mount instead of mounting the volume";
  private static final String PROPAGATION =
      "mount propagation is the kubelet's (a container's mountPropagation), not the volume's";
  private static final String LOOP = "it sets up a loop device; an EFS volume is a network mount";
  private static final String HELPER = "it makes umount(8) run a helper program";
  private static final String USERS =
      "it lets users other than root mount or unmount the volume; the kubelet alone decides when"
          + " a volume is mounted";
  private static final Map<String, String> REFUSED =
      Map.ofEntries(
          Map.entry("bind", BIND),
          Map.entry("rbind", BIND),
          Map.entry("b", BIND),
          Map.entry("r", BIND),
          Map.entry("remount", MOVE),
          Map.entry("move", MOVE),
          Map.entry("m", MOVE),
          Map.entry("shared", PROPAGATION),
          Map.entry("rshared", PROPAGATION),
          Map.entry("slave", PROPAGATION),
          Map.entry("rslave", PROPAGATION),
          Map.entry("private", PROPAGATION),
          Map.entry("rprivate", PROPAGATION),
          Map.entry("unbindable", PROPAGATION),
          Map.entry("runbindable", PROPAGATION),
          Map.entry("loop", LOOP),
          Map.entry("offset", LOOP),
          Map.entry("sizelimit", LOOP),
          Map.entry("encryption", LOOP),
          Map.entry("helper", HELPER),
          Map.entry("uhelper", HELPER),
          Map.entry("user", USERS),
          Map.entry("users", USERS),
          Map.entry("owner", USERS),
          Map.entry("group", USERS));

  private NfsOptions() {}

  /**
   * Why {@code option} cannot be given to {@code mount -t nfs4} here, or {@code null} when it can.
   */
  static String problem(String option) {
    int eq = option.indexOf('=');
    String name = eq < 0 ? option : option.substring(0, eq);
    String value = eq < 0 ? null : option.substring(eq + 1);
    if (!NAME.matcher(name).matches()) {
      return "expected name or name=value";
    }
    if (POSITIVE_INTEGERS.contains(name) || name.equals("retrans")) {
      long min = name.equals("retrans") ? 0 : 1;
      if (value == null || !value.matches("[0-9]{1,9}") || Long.parseLong(value) < min) {
        return "expected " + (min == 0 ? "a non-negative" : "a positive") + " integer";
      }
    }
    return switch (name) {
      case "nfsvers", "vers" ->
          value != null && VERSIONS.contains(value)
              ? null
              : "EFS serves NFS 4.0 and 4.1 (expected 4, 4.0 or 4.1)";
      case "port" -> "the node sets port= to its proxy's local port";
      case "proto" ->
          "tcp".equals(value) ? null : "the local proxy only speaks TCP (expected proto=tcp)";
      default -> null;
    };
  }

  /**
   * Why mount(8) must not be given {@code option} (lower-case, as parsed), or {@code null}: the
   * name before any {@code =} decides, so {@code bind=1} is refused as {@code bind} is.
   */
  static String refusal(String option) {
    int eq = option.indexOf('=');
    String name = eq < 0 ? option : option.substring(0, eq);
    if (name.startsWith("make-")) {
      return PROPAGATION;
    }
    if (name.startsWith("x-")) {
      return "mount(8) and its helpers act on X-/x- options themselves (X-mount.mkdir,"
          + " X-mount.owner, X-mount.subdir, X-mount.idmap, …); the node prepares its mount points"
          + " itself";
    }
    return REFUSED.get(name);
  }

  /** The key under which two options count as the same one. */
  static String key(String option) {
    int eq = option.indexOf('=');
    String name = (eq < 0 ? option : option.substring(0, eq)).toLowerCase(Locale.ROOT);
    return switch (name) {
      case "vers", "nfsvers" -> "nfsvers";
      case "soft", "hard", "softerr" -> "soft|hard";
      case "ro", "rw" -> "ro|rw";
      case "sync", "async" -> "sync|async";
      default -> eq < 0 && name.startsWith("no") && name.length() > 2 ? name.substring(2) : name;
    };
  }

  /**
   * {@code base}, then each of {@code overrides} in order: an option already present is replaced
   * where it stands, a new one is appended.
   */
  static List<String> merge(List<String> base, List<String> overrides) {
    Map<String, String> merged = new LinkedHashMap<>();
    for (String o : base) {
      merged.put(key(o), o);
    }
    for (String o : overrides) {
      merged.put(key(o), o);
    }
    return new ArrayList<>(merged.values());
  }
}

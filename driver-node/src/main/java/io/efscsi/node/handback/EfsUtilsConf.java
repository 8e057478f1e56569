package io.efscsi.node.handback;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * efs-utils' {@code efs-utils.conf} as mount.efs reads it (Python's {@code ConfigParser}):
 * sections, {@code key = value} or {@code key: value}, keys in lower case, whole-line comments
 * ({@code #}, {@code ;}), indented continuation lines, and {@code [DEFAULT]}'s keys seen in every
 * section. Read for the lines efs-utils 3.x copies from it into an efs-proxy tunnel config ({@code
 * write_stunnel_config_file}: the NFS retry timeout, {@code [proxy]}'s logging and read settings,
 * {@code [cloudwatch-log]}'s), so that a handed-back tunnel config says what mount.efs on that node
 * would have written.
 */
public final class EfsUtilsConf {

  /**
   * What the Go driver's node pod renders as efs-utils.conf from v3.1.0 on, as far as the tunnel
   * config reads it ({@code pkg/driver/efs_watch_dog.go}: {@code [cloudwatch-log] enabled} from
   * {@code --efs-cloudwatch-log-enabled}, false by default): the fallback when the node's config
   * dir has no efs-utils.conf to read.
   */
  public static final EfsUtilsConf GO_DRIVER =
      parse(
          """
          [mount]
          retry_nfs_mount_command_timeout_sec = 15
          [cloudwatch-log]
          enabled = false
          log_group_name = /aws/efs/utils
          retention_in_days = 14
          """);

  /** The same before v3.1.0, whose template leaves {@code # enabled = true} commented out. */
  public static final EfsUtilsConf GO_DRIVER_BEFORE_3_1 =
      parse(
          """
          [mount]
          retry_nfs_mount_command_timeout_sec = 15
          [cloudwatch-log]
          # enabled = true
          log_group_name = /aws/efs/utils
          retention_in_days = 14
          """);

  private static final List<String> TRUE = List.of("1", "yes", "true", "on");
  private static final List<String> FALSE = List.of("0", "no", "false", "off");

  private final Map<String, Map<String, String>> sections;
  private final Map<String, String> defaults;

  private EfsUtilsConf(Map<String, Map<String, String>> sections, Map<String, String> defaults) {
    this.sections = sections;
    this.defaults = defaults;
  }

  /** The file if it is there, else {@code fallback}. */
  public static EfsUtilsConf read(Path file, EfsUtilsConf fallback) throws IOException {
    return Files.isRegularFile(file)
        ? parse(Files.readString(file, StandardCharsets.UTF_8))
        : fallback;
  }

  /** Parses a config's text; lines ConfigParser would refuse are skipped. */
  public static EfsUtilsConf parse(String text) {
    Map<String, Map<String, String>> sections = new LinkedHashMap<>();
    Map<String, String> defaults = new LinkedHashMap<>();
    Map<String, String> current = null;
    String lastKey = null;
    for (String raw : text.split("\r?\n", -1)) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        lastKey = line.isEmpty() ? null : lastKey;
        continue;
      }
      boolean indented = Character.isWhitespace(raw.charAt(0));
      if (indented && current != null && lastKey != null) { // a continuation of the last value
        current.merge(lastKey, line, (a, b) -> a.isEmpty() ? b : a + "\n" + b);
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        String name = line.substring(1, line.length() - 1);
        current =
            name.equals("DEFAULT")
                ? defaults
                : sections.computeIfAbsent(name, n -> new LinkedHashMap<>());
        lastKey = null;
        continue;
      }
      int eq = line.indexOf('=');
      int colon = line.indexOf(':');
      int at = eq < 0 ? colon : colon < 0 ? eq : Math.min(eq, colon);
      if (current == null || at <= 0) {
        continue; // before any section, or not key = value
      }
      lastKey = line.substring(0, at).strip().toLowerCase(Locale.ROOT);
      current.put(lastKey, line.substring(at + 1).strip());
    }
    return new EfsUtilsConf(sections, defaults);
  }

  /** Whether the section is there ({@code has_section}; {@code DEFAULT} is not a section). */
  public boolean hasSection(String section) {
    return sections.containsKey(section);
  }

  /** The value in the section or {@code [DEFAULT]}, when the section is there ({@code get}). */
  public Optional<String> get(String section, String key) {
    Map<String, String> s = sections.get(section);
    if (s == null) {
      return Optional.empty();
    }
    String k = key.toLowerCase(Locale.ROOT);
    return Optional.ofNullable(s.containsKey(k) ? s.get(k) : defaults.get(k));
  }

  /** {@code getboolean(..., fallback=None)}: empty when absent or not one of its words. */
  public Optional<Boolean> bool(String section, String key) {
    return get(section, key)
        .map(v -> v.toLowerCase(Locale.ROOT))
        .flatMap(v ->
            TRUE.contains(v)
                ? Optional.of(true)
                : FALSE.contains(v) ? Optional.of(false) : Optional.empty());
  }

  /** {@code getint(..., fallback=None)}: empty when absent or not a decimal integer. */
  public Optional<Integer> integer(String section, String key) {
    return get(section, key)
        .flatMap(v -> {
          try {
            return Optional.of(Integer.parseInt(v));
          } catch (NumberFormatException e) {
            return Optional.empty();
          }
        });
  }

  /** Python's {@code str()} of a boolean, as efs-utils writes one into a tunnel config. */
  static String python(boolean b) {
    return b ? "True" : "False";
  }
}

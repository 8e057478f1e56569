package io.efscsi.node.takeover;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Stream;

/**
 * Where the Go driver's efs-utils left its files, as this container sees them (all read-only): the
 * state dir ({@code /var/run/efs}, a hostPath at the same path in both charts) and the two
 * candidates for what efs-utils recorded as {@code /etc/amazon/efs}. In the Go driver's pod that
 * path is a link made by its {@code InitConfigDir}: to the host's {@code /etc/amazon/efs} (mounted
 * there as {@code /etc/amazon/efs-legacy}) when an {@code efs-utils.conf} already existed in it,
 * else to the host's {@code /var/amazon/efs}. {@link #resolve} follows the same choice and falls
 * back to the other directory.
 *
 * @param stateDir efs-utils' state dir here
 * @param configDir the host's {@code /var/amazon/efs} here
 * @param legacyConfigDir the host's {@code /etc/amazon/efs} here
 */
public record EfsUtilsDirs(Path stateDir, Path configDir, Path legacyConfigDir) {

  public static final String RECORDED_STATE_DIR = "/var/run/efs";
  public static final String RECORDED_CONFIG_DIR = "/etc/amazon/efs";
  public static final String DEFAULT_CA_FILE = RECORDED_CONFIG_DIR + "/efs-utils.crt";

  /**
   * The chart's mounts: the same state dir, {@code /var/amazon/efs}, {@code
   * /etc/amazon/efs-legacy}.
   */
  public static final EfsUtilsDirs DEFAULT =
      new EfsUtilsDirs(
          Path.of(RECORDED_STATE_DIR),
          Path.of("/var/amazon/efs"),
          Path.of("/etc/amazon/efs-legacy"));

  /** One mount's files in the state dir. */
  public record Stored(
      String stem, int port, String state, Optional<String> config, Instant modified) {}

  /**
   * Where a path recorded by efs-utils is here, if it exists: {@code /var/run/efs/…} in the state
   * dir, {@code /etc/amazon/efs/…} in the config dir the Go driver linked (then the other one), any
   * other absolute path as it is.
   */
  public Optional<Path> resolve(String recorded) {
    List<Path> candidates = new ArrayList<>();
    if (recorded.startsWith(RECORDED_STATE_DIR + "/")) {
      candidates.add(stateDir.resolve(recorded.substring(RECORDED_STATE_DIR.length() + 1)));
    } else if (recorded.startsWith(RECORDED_CONFIG_DIR + "/")) {
      String rest = recorded.substring(RECORDED_CONFIG_DIR.length() + 1);
      boolean legacyFirst = Files.exists(legacyConfigDir.resolve("efs-utils.conf"));
      candidates.add((legacyFirst ? legacyConfigDir : configDir).resolve(rest));
      candidates.add((legacyFirst ? configDir : legacyConfigDir).resolve(rest));
    } else if (recorded.startsWith("/")) {
      candidates.add(Path.of(recorded));
    }
    return candidates.stream().filter(Files::isRegularFile).findFirst();
  }

  /**
   * The path efs-utils records for a file of its own dirs here ({@link #resolve}'s inverse): {@code
   * /etc/amazon/efs/…} for one in the config dir the Go driver links (the one {@link #resolve}
   * looks in first), {@code /var/run/efs/…} for one in the state dir; empty for any other file.
   */
  public Optional<String> recordedPath(Path here) {
    Path p = here.toAbsolutePath().normalize();
    boolean legacyFirst = Files.exists(legacyConfigDir.resolve("efs-utils.conf"));
    Path linked = (legacyFirst ? legacyConfigDir : configDir).toAbsolutePath().normalize();
    if (p.startsWith(linked) && !p.equals(linked)) {
      return Optional.of(RECORDED_CONFIG_DIR + "/" + linked.relativize(p));
    }
    Path state = stateDir.toAbsolutePath().normalize();
    if (p.startsWith(state) && !p.equals(state)) {
      return Optional.of(RECORDED_STATE_DIR + "/" + state.relativize(p));
    }
    return Optional.empty();
  }

  /**
   * Every mount state in the state dir ({@code fs-…} files; efs-utils' {@code ~} temp files, the
   * tunnel configs and the per-mount dirs are not states). Empty when there is no state dir.
   */
  public List<Stored> list() throws IOException {
    if (!Files.isDirectory(stateDir)) {
      return List.of();
    }
    List<Stored> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(stateDir)) {
      for (Path p : files.toList()) {
        String name = p.getFileName().toString();
        OptionalInt port = EfsUtilsStateParser.portOf(name);
        if (!name.startsWith("fs-") || port.isEmpty() || !Files.isRegularFile(p)) {
          continue;
        }
        try {
          Path cfg = stateDir.resolve(EfsUtilsStateParser.CONFIG_PREFIX + name);
          out.add(
              new Stored(
                  name,
                  port.getAsInt(),
                  Files.readString(p),
                  Files.isRegularFile(cfg) ? Optional.of(Files.readString(cfg)) : Optional.empty(),
                  Files.getLastModifiedTime(p).toInstant()));
        } catch (NoSuchFileException gone) {
          // the watchdog removed it meanwhile
        }
      }
    }
    return out;
  }
}

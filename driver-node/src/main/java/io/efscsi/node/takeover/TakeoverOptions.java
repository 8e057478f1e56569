package io.efscsi.node.takeover;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Taking over the Go driver's mounts (docs/migration.md).
 *
 * @param enabled look for and take over mounts efs-utils made
 * @param dirs where efs-utils' files are seen in this container
 * @param quiet how long efs-utils' state must be untouched (its watchdog gone) before a takeover
 */
public record TakeoverOptions(boolean enabled, EfsUtilsDirs dirs, Duration quiet) {

  public static final Duration DEFAULT_QUIET = Duration.ofSeconds(5);

  /** Off (the demo, tests of other things). */
  public static final TakeoverOptions DISABLED =
      new TakeoverOptions(false, EfsUtilsDirs.DEFAULT, DEFAULT_QUIET);

  /**
   * Our flags; the two config dirs are the Go driver's {@code --efs-utils-config-dir-path} and
   * {@code --efs-utils-config-legacy-dir-path}, declared with its node flags.
   */
  public static final List<Flag> FLAGS =
      List.of(
          Flag.bool(
              "takeover",
              true,
              "take over the port of mounts the Go driver's efs-utils made once its proxy is gone"),
          Flag.string(
              "efs-utils-state-dir",
              EfsUtilsDirs.RECORDED_STATE_DIR,
              "where efs-utils' state dir (the host's /var/run/efs) is mounted, read-only"),
          Flag.duration(
              "takeover-quiet-period",
              DEFAULT_QUIET.toSeconds() + "s",
              "how long efs-utils' state must be untouched (its watchdog gone) before a takeover"));

  public static TakeoverOptions from(Flags flags) throws UsageException {
    Duration quiet = flags.duration("takeover-quiet-period");
    if (quiet.isNegative()) {
      throw new UsageException(
          "invalid value '"
              + flags.string("takeover-quiet-period")
              + "' for flag '--takeover-quiet-period': expected a duration of 0s or more");
    }
    return new TakeoverOptions(
        flags.bool("takeover"),
        new EfsUtilsDirs(
            absolute(flags, "efs-utils-state-dir"),
            absolute(flags, "efs-utils-config-dir-path"),
            absolute(flags, "efs-utils-config-legacy-dir-path")),
        quiet);
  }

  private static Path absolute(Flags flags, String name) throws UsageException {
    Path p = Path.of(flags.string(name).strip());
    if (!p.isAbsolute()) {
      throw new UsageException(
          "invalid value '" + p + "' for flag '--" + name + "': expected an absolute path");
    }
    return p;
  }
}

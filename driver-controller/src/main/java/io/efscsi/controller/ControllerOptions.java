package io.efscsi.controller;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import io.efscsi.controller.provision.Tags;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Controller settings, from the Go driver's flags plus our own {@code --region}, {@code
 * --max-access-points-per-file-system} and {@code --access-point-refresh}.
 *
 * @param region the AWS region when given on the command line
 * @param tags {@code --tags}, {@code key:value} pairs separated by spaces, as the Go driver
 * @param deleteAccessPointRootDir whether DeleteVolume removes the access point's directory
 * @param adaptiveRetryMode adaptive (true) or standard (false) SDK retries
 * @param maxAccessPointsPerFileSystem access points per file system before CreateVolume answers
 *     RESOURCE_EXHAUSTED; also the widest GID range used
 * @param accessPointRefresh how old the controller's listing of a file system's access points may
 *     get before it lists again
 */
public record ControllerOptions(
    Optional<String> region,
    String tags,
    boolean deleteAccessPointRootDir,
    boolean adaptiveRetryMode,
    int maxAccessPointsPerFileSystem,
    Duration accessPointRefresh) {

  public static final int DEFAULT_MAX_ACCESS_POINTS = 10_000;
  public static final Duration DEFAULT_REFRESH = Duration.ofMinutes(5);

  public static final List<Flag> FLAGS =
      List.of(
          Flag.string(
              "region",
              "",
              "AWS region; default from AWS_REGION, AWS_DEFAULT_REGION, then instance metadata"),
          Flag.string("tags", "", "space-separated key:value tags for every access point"),
          Flag.bool(
              "delete-access-point-root-dir",
              false,
              "on DeleteVolume, remove the access point's root directory and its data (guarded:"
                  + " never /, never outside its basePath, never a directory another access point"
                  + " uses)"),
          Flag.bool(
              "adaptive-retry-mode",
              true,
              "adaptive client-side rate limiting for AWS API retries (false = standard)"),
          Flag.integer(
              "max-access-points-per-file-system",
              DEFAULT_MAX_ACCESS_POINTS,
              "access points per file system (the EFS quota; raise it with the quota)"),
          Flag.duration(
              "access-point-refresh",
              "5m",
              "how often the controller re-lists a file system's access points to see changes"
                  + " made outside it"));

  /** Backwards-compatible constructor with the defaults for the newer settings. */
  public ControllerOptions(
      Optional<String> region, String tags, boolean deleteAccessPointRootDir, boolean adaptive) {
    this(
        region,
        tags,
        deleteAccessPointRootDir,
        adaptive,
        DEFAULT_MAX_ACCESS_POINTS,
        DEFAULT_REFRESH);
  }

  public static ControllerOptions from(Flags flags) throws UsageException {
    String region = flags.string("region").strip();
    if (!region.isEmpty() && !region.matches("[a-z]{2}(-[a-z]+)+-\\d+")) {
      throw new UsageException(
          "invalid value '"
              + region
              + "' for flag '--region': expected a region such as us-east-1");
    }
    long limit = flags.integer("max-access-points-per-file-system");
    if (limit < 1 || limit > 1_000_000) {
      throw new UsageException(
          "invalid value '"
              + limit
              + "' for flag '--max-access-points-per-file-system': expected 1 to 1000000");
    }
    Duration refresh = flags.duration("access-point-refresh");
    if (refresh.isNegative()) {
      throw new UsageException(
          "invalid value '"
              + refresh
              + "' for flag '--access-point-refresh': must not be negative");
    }
    return new ControllerOptions(
        region.isEmpty() ? Optional.empty() : Optional.of(region),
        flags.string("tags"),
        flags.bool("delete-access-point-root-dir"),
        flags.bool("adaptive-retry-mode"),
        (int) limit,
        refresh);
  }

  public Tags parsedTags() {
    return Tags.parse(tags);
  }
}

package io.efscsi.controller;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import java.util.List;
import java.util.Optional;

/**
 * Controller settings, from the Go driver's flags plus our own {@code --region}.
 *
 * @param region the AWS region when given on the command line
 * @param tags {@code --tags}, {@code key:value} pairs separated by spaces, as the Go driver
 * @param deleteAccessPointRootDir whether DeleteVolume removes the access point's directory
 * @param adaptiveRetryMode adaptive (true) or standard (false) SDK retries
 */
public record ControllerOptions(
    Optional<String> region,
    String tags,
    boolean deleteAccessPointRootDir,
    boolean adaptiveRetryMode) {

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
              "delete the access point's root directory on DeleteVolume"),
          Flag.bool(
              "adaptive-retry-mode",
              true,
              "adaptive client-side rate limiting for AWS API retries (false = standard)"));

  public static ControllerOptions from(Flags flags) throws UsageException {
    String region = flags.string("region").strip();
    if (!region.isEmpty() && !region.matches("[a-z]{2}(-[a-z]+)+-\\d+")) {
      throw new UsageException(
          "invalid value '"
              + region
              + "' for flag '--region': expected a region such as us-east-1");
    }
    return new ControllerOptions(
        region.isEmpty() ? Optional.empty() : Optional.of(region),
        flags.string("tags"),
        flags.bool("delete-access-point-root-dir"),
        flags.bool("adaptive-retry-mode"));
  }
}

package io.efscsi.common.config;

import io.efscsi.common.grpc.Endpoint;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Settings every plugin process has, whatever its mode.
 *
 * @param endpoint where the CSI gRPC server listens
 * @param httpEndpoint where {@code /healthz} and {@code /metrics} are served; empty = off
 * @param metricsCertFile PEM certificate chain for HTTPS on the http endpoint
 * @param metricsKeyFile PEM (PKCS#8) private key for HTTPS on the http endpoint
 * @param metricsAuth who may read {@code /metrics}: anyone, or a Kubernetes-authorised user over
 *     HTTPS
 * @param verbosity klog-style level: 0-3 INFO, 4-5 DEBUG, 6+ TRACE
 * @param shutdownGrace how long in-flight calls may run after SIGTERM
 */
public record CommonOptions(
    Endpoint endpoint,
    Optional<HostPort> httpEndpoint,
    Optional<Path> metricsCertFile,
    Optional<Path> metricsKeyFile,
    MetricsAuth metricsAuth,
    int verbosity,
    Duration shutdownGrace) {

  /** Options with {@code /metrics} open to anyone ({@code --metrics-auth=none}, the default). */
  public CommonOptions(
      Endpoint endpoint,
      Optional<HostPort> httpEndpoint,
      Optional<Path> metricsCertFile,
      Optional<Path> metricsKeyFile,
      int verbosity,
      Duration shutdownGrace) {
    this(
        endpoint,
        httpEndpoint,
        metricsCertFile,
        metricsKeyFile,
        MetricsAuth.NONE,
        verbosity,
        shutdownGrace);
  }

  /** The Go driver's default, kept for drop-in: {@code unix://tmp/csi.sock} is /tmp/csi.sock. */
  public static final String DEFAULT_ENDPOINT = "unix://tmp/csi.sock";

  /**
   * The flags klog's {@code InitFlags} registers in the Go binary beyond {@code -v} and {@code
   * -logtostderr} (klog v2 as the Go driver v3.x vendors it): accepted so that a manifest or patch
   * carrying one starts, each with its Go type; none has an effect here (the driver logs to stderr
   * through Logback), and each one given is named once in a warning at start.
   */
  public static final List<Flag> KLOG_FLAGS =
      List.of(
          Flag.bool("alsologtostderr", false, "klog: accepted; logs always go to stderr"),
          Flag.string("log_dir", "", "klog: accepted, no effect (logs go to stderr only)"),
          Flag.string("log_file", "", "klog: accepted, no effect (logs go to stderr only)"),
          Flag.integer("log_file_max_size", 1800, "klog: accepted, no effect"),
          Flag.string("stderrthreshold", "INFO", "klog: accepted, no effect (all to stderr)"),
          Flag.string("vmodule", "", "klog: accepted, no effect (use --v)"),
          Flag.string("log_backtrace_at", "", "klog: accepted, no effect"),
          Flag.bool("add_dir_header", false, "klog: accepted, no effect"),
          Flag.bool("skip_headers", false, "klog: accepted, no effect"),
          Flag.bool("skip_log_headers", false, "klog: accepted, no effect"),
          Flag.bool("one_output", false, "klog: accepted, no effect"),
          Flag.bool("legacy_stderr_threshold_behavior", true, "klog: accepted, no effect"));

  /** One warning per klog flag given that has no effect here (logged once logging is set up). */
  public static List<String> klogWarnings(Flags flags) {
    return KLOG_FLAGS.stream()
        .map(Flag::name)
        .filter(flags::isSet)
        .filter(n -> !n.equals("alsologtostderr"))
        .map(n ->
            "flag --"
                + n
                + " (klog) is accepted for the Go driver's manifests but has no"
                + " effect: this driver logs to stderr at the level of --v")
        .toList();
  }

  public static final List<Flag> FLAGS =
      java.util.stream.Stream.concat(
              List.of(
                  Flag.string(
                      "endpoint",
                      DEFAULT_ENDPOINT,
                      "CSI endpoint: unix:///path, unix:/path or tcp://host:port"),
                  Flag.bool("version", false, "print the version as JSON and exit"),
                  Flag.string(
                      "http-endpoint",
                      "",
                      "address (host:port) for /healthz and Prometheus /metrics; off when empty"),
                  Flag.string(
                      "metrics-cert-file", "", "PEM certificate for HTTPS on --http-endpoint"),
                  Flag.string(
                      "metrics-key-file", "", "PEM (PKCS#8) key for HTTPS on --http-endpoint"),
                  Flag.string(
                      "metrics-auth",
                      "none",
                      "who may read /metrics: none (anyone who reaches the port) or kubernetes (HTTPS,"
                          + " a bearer token allowed 'get' on the non-resource URL /metrics, checked with"
                          + " TokenReview and SubjectAccessReview)"),
                  Flag.integer(
                      "v", 2, "log verbosity (klog levels: 0-3 info, 4-5 debug, 6+ trace)"),
                  Flag.bool(
                      "logtostderr",
                      true,
                      "accepted for klog compatibility; logs always go to stderr"),
                  Flag.bool("debug-logs", false, "debug logging (same as --v=5)"),
                  Flag.duration(
                      "shutdown-grace-period",
                      "20s",
                      "how long in-flight calls may run after SIGTERM"))
                  .stream(),
              KLOG_FLAGS.stream())
          .toList();

  /** Builds the options from parsed flags, checking combinations the flag parser cannot. */
  public static CommonOptions from(Flags flags) throws UsageException {
    Endpoint endpoint;
    try {
      endpoint = Endpoint.parse(flags.string("endpoint"));
    } catch (IllegalArgumentException e) {
      throw new UsageException("flag '--endpoint': " + e.getMessage());
    }
    Optional<HostPort> http = Optional.empty();
    String httpText = flags.string("http-endpoint").strip();
    if (!httpText.isEmpty()) {
      try {
        http = Optional.of(HostPort.parse(httpText));
      } catch (IllegalArgumentException e) {
        throw new UsageException("flag '--http-endpoint': " + e.getMessage());
      }
    }
    Optional<Path> cert = optionalPath(flags.string("metrics-cert-file"));
    Optional<Path> key = optionalPath(flags.string("metrics-key-file"));
    if (cert.isPresent() != key.isPresent()) {
      throw new UsageException(
          "flags '--metrics-cert-file' and '--metrics-key-file' must be given together");
    }
    if (cert.isPresent() && http.isEmpty()) {
      throw new UsageException("flag '--metrics-cert-file' needs '--http-endpoint'");
    }
    MetricsAuth auth = MetricsAuth.parse(flags.string("metrics-auth"));
    if (auth == MetricsAuth.KUBERNETES && http.isEmpty()) {
      throw new UsageException("flag '--metrics-auth=kubernetes' needs '--http-endpoint'");
    }
    long v = flags.integer("v");
    if (v < 0) {
      throw new UsageException("invalid value '" + v + "' for flag '--v': expected 0 or more");
    }
    int verbosity = (int) Math.min(v, 10);
    if (flags.bool("debug-logs")) {
      verbosity = Math.max(verbosity, 5);
    }
    Duration grace = flags.duration("shutdown-grace-period");
    if (grace.isNegative()) {
      throw new UsageException(
          "invalid value '"
              + flags.string("shutdown-grace-period")
              + "' for flag '--shutdown-grace-period': expected a duration of 0s or more");
    }
    return new CommonOptions(endpoint, http, cert, key, auth, verbosity, grace);
  }

  private static Optional<Path> optionalPath(String s) {
    return s.isBlank() ? Optional.empty() : Optional.of(Path.of(s.strip()));
  }
}

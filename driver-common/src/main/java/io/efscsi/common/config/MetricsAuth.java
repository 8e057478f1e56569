package io.efscsi.common.config;

/**
 * Who may read {@code /metrics} on the http endpoint ({@code --metrics-auth}).
 *
 * <p>{@link #NONE} is the Go driver's behaviour: anyone who reaches the port. {@link #KUBERNETES}
 * is what Kubernetes' own components do: HTTPS only, each request's bearer token checked with a
 * TokenReview and its user's right to {@code get /metrics} with a SubjectAccessReview.
 */
public enum MetricsAuth {
  NONE("none"),
  KUBERNETES("kubernetes");

  private final String flagValue;

  MetricsAuth(String flagValue) {
    this.flagValue = flagValue;
  }

  /** The value as written on the command line. */
  public String flagValue() {
    return flagValue;
  }

  /** Parses the flag's value; throws naming the flag and the accepted values. */
  public static MetricsAuth parse(String text) throws UsageException {
    for (MetricsAuth a : values()) {
      if (a.flagValue.equals(text.strip())) {
        return a;
      }
    }
    throw new UsageException(
        "invalid value '" + text + "' for flag '--metrics-auth': expected none or kubernetes");
  }
}

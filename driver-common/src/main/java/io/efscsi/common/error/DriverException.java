package io.efscsi.common.error;

import java.util.Locale;

/**
 * The one domain exception of the driver. Ports and domain classes throw it with a {@link Kind}
 * that says what went wrong in CSI terms; {@code StatusMapper} turns it into a gRPC status at the
 * edge. The message always names what was wrong and with which value.
 */
public class DriverException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** What kind of failure this is; mirrors the CSI error table, free of gRPC types. */
  public enum Kind {
    INVALID_ARGUMENT,
    NOT_FOUND,
    ALREADY_EXISTS,
    FAILED_PRECONDITION,
    RESOURCE_EXHAUSTED,
    ABORTED,
    UNAVAILABLE,
    UNAUTHENTICATED,
    PERMISSION_DENIED,
    DEADLINE_EXCEEDED,
    OUT_OF_RANGE,
    UNIMPLEMENTED,
    INTERNAL
  }

  private final Kind kind;

  public DriverException(Kind kind, String message) {
    this(kind, message, null);
  }

  public DriverException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }

  public static DriverException invalidArgument(String format, Object... args) {
    return new DriverException(Kind.INVALID_ARGUMENT, format(format, args));
  }

  public static DriverException notFound(String format, Object... args) {
    return new DriverException(Kind.NOT_FOUND, format(format, args));
  }

  public static DriverException alreadyExists(String format, Object... args) {
    return new DriverException(Kind.ALREADY_EXISTS, format(format, args));
  }

  public static DriverException failedPrecondition(String format, Object... args) {
    return new DriverException(Kind.FAILED_PRECONDITION, format(format, args));
  }

  public static DriverException resourceExhausted(String format, Object... args) {
    return new DriverException(Kind.RESOURCE_EXHAUSTED, format(format, args));
  }

  public static DriverException aborted(String format, Object... args) {
    return new DriverException(Kind.ABORTED, format(format, args));
  }

  public static DriverException unavailable(String format, Object... args) {
    return new DriverException(Kind.UNAVAILABLE, format(format, args));
  }

  public static DriverException outOfRange(String format, Object... args) {
    return new DriverException(Kind.OUT_OF_RANGE, format(format, args));
  }

  public static DriverException internal(String message, Throwable cause) {
    return new DriverException(Kind.INTERNAL, message, cause);
  }

  private static String format(String format, Object... args) {
    return args.length == 0 ? format : String.format(Locale.ROOT, format, args);
  }
}

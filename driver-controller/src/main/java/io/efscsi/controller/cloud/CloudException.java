package io.efscsi.controller.cloud;

import io.efscsi.common.error.DriverException;
import java.util.Optional;

/** An AWS failure, classified; its {@link DriverException.Kind} is what the CSI client sees. */
public final class CloudException extends DriverException {

  private static final long serialVersionUID = 1L;

  public enum Reason {
    ACCESS_DENIED(Kind.UNAUTHENTICATED),
    FILE_SYSTEM_NOT_FOUND(Kind.INVALID_ARGUMENT),
    ACCESS_POINT_NOT_FOUND(Kind.NOT_FOUND),
    ALREADY_EXISTS(Kind.ALREADY_EXISTS),
    LIMIT_EXCEEDED(Kind.RESOURCE_EXHAUSTED),
    THROTTLED(Kind.UNAVAILABLE),
    UNAVAILABLE(Kind.UNAVAILABLE),
    BAD_REQUEST(Kind.INVALID_ARGUMENT),
    OTHER(Kind.INTERNAL);

    final Kind kind;

    Reason(Kind kind) {
      this.kind = kind;
    }
  }

  private final Reason reason;
  private final transient Optional<String> existingId;

  public CloudException(Reason reason, String message, Throwable cause) {
    this(reason, message, cause, Optional.empty());
  }

  public CloudException(
      Reason reason, String message, Throwable cause, Optional<String> existingId) {
    super(reason.kind, message, cause);
    this.reason = reason;
    this.existingId = existingId;
  }

  public Reason reason() {
    return reason;
  }

  /** For {@code ALREADY_EXISTS}: the id of the access point that holds the client token. */
  public Optional<String> existingId() {
    return existingId;
  }
}

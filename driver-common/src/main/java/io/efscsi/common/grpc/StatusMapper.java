package io.efscsi.common.grpc;

import io.efscsi.common.error.DriverException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The one place where exceptions become gRPC statuses. Nothing leaves the server as {@code
 * UNKNOWN}: anything not recognised is {@code INTERNAL} with the exception's class and message.
 */
public final class StatusMapper {

  private StatusMapper() {}

  /** Maps a throwable (domain, gRPC or JDK) to the status a CSI client should see. */
  public static Status toStatus(Throwable t) {
    Throwable e = unwrap(t);
    return switch (e) {
      case DriverException d -> code(d.kind()).withDescription(d.getMessage()).withCause(d);
      case StatusRuntimeException s -> known(s.getStatus(), s);
      case StatusException s -> known(s.getStatus(), s);
      case IllegalArgumentException i -> Status.INVALID_ARGUMENT.withDescription(i.getMessage());
      case TimeoutException x ->
          Status.DEADLINE_EXCEEDED.withDescription(describe("timed out", x)).withCause(x);
      case InterruptedException x ->
          Status.ABORTED.withDescription("interrupted, retry the call").withCause(x);
      case CancellationException x ->
          Status.CANCELLED.withDescription(describe("cancelled", x)).withCause(x);
      case UnsupportedOperationException x ->
          Status.UNIMPLEMENTED.withDescription(describe("not implemented", x)).withCause(x);
      case IOException x -> Status.INTERNAL.withDescription(describe("I/O error", x)).withCause(x);
      default -> Status.INTERNAL.withDescription(describe("internal error", e)).withCause(e);
    };
  }

  private static Status known(Status status, Throwable source) {
    if (status.getCode() != Status.Code.UNKNOWN) {
      return status;
    }
    Throwable cause = status.getCause();
    if (cause != null && cause != source) {
      return toStatus(cause);
    }
    String d = status.getDescription();
    return Status.INTERNAL.withDescription(d == null ? "internal error" : d).withCause(cause);
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException
            || e instanceof ExecutionException
            || e instanceof UncheckedIOException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  private static String describe(String what, Throwable e) {
    String m = e.getMessage();
    String type = e.getClass().getSimpleName();
    return m == null || m.isBlank() ? what + " (" + type + ")" : what + ": " + type + ": " + m;
  }

  static Status code(DriverException.Kind kind) {
    return switch (kind) {
      case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
      case NOT_FOUND -> Status.NOT_FOUND;
      case ALREADY_EXISTS -> Status.ALREADY_EXISTS;
      case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
      case RESOURCE_EXHAUSTED -> Status.RESOURCE_EXHAUSTED;
      case ABORTED -> Status.ABORTED;
      case UNAVAILABLE -> Status.UNAVAILABLE;
      case UNAUTHENTICATED -> Status.UNAUTHENTICATED;
      case PERMISSION_DENIED -> Status.PERMISSION_DENIED;
      case DEADLINE_EXCEEDED -> Status.DEADLINE_EXCEEDED;
      case OUT_OF_RANGE -> Status.OUT_OF_RANGE;
      case UNIMPLEMENTED -> Status.UNIMPLEMENTED;
      case INTERNAL -> Status.INTERNAL;
    };
  }
}

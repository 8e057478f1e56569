package io.efscsi.common.grpc;

import io.efscsi.common.error.DriverException;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns whatever a service throws, or passes to {@code onError}, into a proper status through
 * {@link StatusMapper}, so that no client ever sees {@code UNKNOWN}.
 */
public final class ErrorMappingInterceptor implements ServerInterceptor {

  private static final Logger log = LoggerFactory.getLogger(ErrorMappingInterceptor.class);

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    GuardedCall<Q, R> guarded = new GuardedCall<>(call);
    ServerCall.Listener<Q> delegate;
    try {
      delegate = next.startCall(guarded, headers);
    } catch (RuntimeException e) {
      guarded.fail(e);
      return new ServerCall.Listener<>() {};
    }
    return new SimpleForwardingServerCallListener<>(delegate) {
      @Override
      public void onMessage(Q message) {
        guarded.run(() -> super.onMessage(message));
      }

      @Override
      public void onHalfClose() {
        guarded.run(super::onHalfClose);
      }

      @Override
      public void onReady() {
        guarded.run(super::onReady);
      }
    };
  }

  private static final class GuardedCall<Q, R> extends SimpleForwardingServerCall<Q, R> {
    private final AtomicBoolean closed = new AtomicBoolean();

    GuardedCall(ServerCall<Q, R> delegate) {
      super(delegate);
    }

    void run(Runnable step) {
      try {
        step.run();
      } catch (RuntimeException e) {
        fail(e);
      } catch (Error e) {
        fail(e);
        throw e;
      }
    }

    void fail(Throwable t) {
      if (closed.get()) {
        log.warn(
            "{} threw after its call was closed", getMethodDescriptor().getFullMethodName(), t);
        return;
      }
      close(StatusMapper.toStatus(t), new Metadata());
    }

    @Override
    public void close(Status status, Metadata trailers) {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      Status mapped = status;
      if (status.getCode() == Status.Code.UNKNOWN) {
        mapped =
            status.getCause() != null
                ? StatusMapper.toStatus(status.getCause())
                : Status.INTERNAL.withDescription(status.getDescription());
      }
      if (mapped.getCode() == Status.Code.INTERNAL
          && mapped.getCause() instanceof DriverException) {
        // an expected failure (a mount that failed, with its reason): the call log says it once at
        // ERROR; its stack trace only at DEBUG
        log.debug(
            "{} failed: {}",
            getMethodDescriptor().getBareMethodName(),
            mapped.getDescription(),
            mapped.getCause());
      } else if (mapped.getCode() == Status.Code.INTERNAL && mapped.getCause() != null) {
        log.error(
            "{} failed: {}",
            getMethodDescriptor().getBareMethodName(),
            mapped.getDescription(),
            mapped.getCause());
      }
      super.close(mapped, trailers);
    }
  }
}

package io.efscsi.common.grpc;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Every CSI call's duration by method and final gRPC code: the histogram {@code
 * efs_csi_csi_call_duration_seconds{method,code}} (NodeStageVolume, CreateVolume… and OK,
 * DEADLINE_EXCEEDED…). Both label sets are bounded. Served on the controller's and the node's
 * {@code /metrics}; installed outermost, so it sees the status the client gets.
 */
public final class CallMetricsInterceptor implements ServerInterceptor {

  /** The meter name (Prometheus adds {@code _seconds}). */
  public static final String NAME = "efs_csi_csi_call_duration";

  private final MeterRegistry registry;

  public CallMetricsInterceptor(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getBareMethodName();
    long started = System.nanoTime();
    ServerCall<Q, R> timed =
        new SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            timer(method, status.getCode().name())
                .record(Duration.ofNanos(System.nanoTime() - started));
            super.close(status, trailers);
          }
        };
    return next.startCall(timed, headers);
  }

  private Timer timer(String method, String code) {
    return Timer.builder(NAME)
        .description("CSI calls by method and final gRPC code")
        .tags("method", method, "code", code)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofMinutes(3))
        .register(registry);
  }
}

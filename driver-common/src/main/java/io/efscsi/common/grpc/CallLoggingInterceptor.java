package io.efscsi.common.grpc;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.event.Level;

/**
 * Logs every CSI call once on arrival (request with secrets stripped) and once on completion
 * (status and duration). Volume id and target paths are put in the MDC while the call's handler
 * runs. The calls kubelet and the sidecars make every few seconds are logged at DEBUG so they do
 * not drown the rest; their failures are still logged at WARN.
 */
public final class CallLoggingInterceptor implements ServerInterceptor {

  /** Logger name for call lines, so operators can tune it on its own. */
  public static final String LOGGER = "io.efscsi.grpc.calls";

  static final Set<String> HIGH_FREQUENCY =
      Set.of("Probe", "NodeGetCapabilities", "NodeGetVolumeStats");

  /** Request fields copied into the MDC, by proto field name. */
  private static final Map<String, String> MDC_FIELDS =
      Map.of(
          "volume_id", "volume_id",
          "name", "volume_name",
          "target_path", "target_path",
          "staging_target_path", "staging_path");

  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getBareMethodName();
    CallContext ctx = new CallContext(method, HIGH_FREQUENCY.contains(method), System.nanoTime());
    ServerCall<Q, R> logged =
        new SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            ctx.withMdc(() -> ctx.logEnd(status));
            super.close(status, trailers);
          }
        };
    ServerCall.Listener<Q> delegate = next.startCall(logged, headers);
    return new SimpleForwardingServerCallListener<>(delegate) {
      @Override
      public void onMessage(Q message) {
        ctx.capture(message);
        ctx.withMdc(() -> {
          ctx.logStart(message);
          super.onMessage(message);
        });
      }

      @Override
      public void onHalfClose() {
        ctx.withMdc(super::onHalfClose);
      }

      @Override
      public void onCancel() {
        ctx.withMdc(super::onCancel);
      }

      @Override
      public void onComplete() {
        ctx.withMdc(super::onComplete);
      }
    };
  }

  private static final class CallContext {
    private final String method;
    private final boolean quiet;
    private final long startNanos;
    private final Map<String, String> mdc = new LinkedHashMap<>();

    CallContext(String method, boolean quiet, long startNanos) {
      this.method = method;
      this.quiet = quiet;
      this.startNanos = startNanos;
      mdc.put("rpc", method);
    }

    void capture(Object message) {
      if (!(message instanceof Message m)) {
        return;
      }
      for (Map.Entry<String, String> e : MDC_FIELDS.entrySet()) {
        FieldDescriptor f = m.getDescriptorForType().findFieldByName(e.getKey());
        if (f != null && f.getJavaType() == FieldDescriptor.JavaType.STRING && !f.isRepeated()) {
          String v = (String) m.getField(f);
          if (!v.isEmpty()) {
            mdc.put(e.getValue(), v);
          }
        }
      }
    }

    void withMdc(Runnable r) {
      Map<String, String> previous = MDC.getCopyOfContextMap();
      mdc.forEach(MDC::put);
      try {
        r.run();
      } finally {
        if (previous == null) {
          MDC.clear();
        } else {
          MDC.setContextMap(previous);
        }
      }
    }

    void logStart(Object message) {
      Level level = quiet ? Level.DEBUG : Level.INFO;
      if (log.isEnabledForLevel(level)) {
        String body =
            message instanceof Message m ? SecretRedactor.toLogString(m) : String.valueOf(message);
        log.atLevel(level).log("{} called: {}", method, body.isEmpty() ? "{}" : "{" + body + "}");
      }
    }

    void logEnd(Status status) {
      long millis = (System.nanoTime() - startNanos) / 1_000_000;
      Level level = levelFor(status.getCode(), quiet);
      if (status.isOk()) {
        log.atLevel(level).log("{} succeeded in {} ms", method, millis);
      } else {
        log.atLevel(level)
            .log(
                "{} failed in {} ms: {} {}",
                method,
                millis,
                status.getCode(),
                status.getDescription());
      }
    }

    static Level levelFor(Status.Code code, boolean quiet) {
      return switch (code) {
        case OK -> quiet ? Level.DEBUG : Level.INFO;
        case INTERNAL, UNKNOWN, DATA_LOSS -> Level.ERROR;
        default -> Level.WARN;
      };
    }
  }
}

package io.efscsi.controller.cloud;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.core.retry.RetryUtils;

/**
 * Per-API metrics with the Go driver's names: {@code aws_efs_csi_api_request_duration_seconds}
 * (histogram, labels request and service), {@code aws_efs_csi_api_request_errors_total} (plus code)
 * and {@code aws_efs_csi_api_request_throttles_total}. Durations cover one API call including its
 * retries; throttles count every throttled attempt. SDK clients report through the interceptor;
 * clients of ours that call a REST API directly (S3 Files) report through {@link #start}.
 */
public final class ApiMetrics implements ExecutionInterceptor {

  static final String DURATION = "aws_efs_csi_api_request_duration";
  static final String ERRORS = "aws_efs_csi_api_request_errors";
  static final String THROTTLES = "aws_efs_csi_api_request_throttles";
  private static final List<String> EFS_OPERATIONS =
      List.of(
          "CreateAccessPoint",
          "DeleteAccessPoint",
          "DescribeAccessPoints",
          "DescribeFileSystems",
          "DescribeMountTargets");
  private static final List<String> S3FILES_OPERATIONS =
      List.of("CreateAccessPoint", "DeleteAccessPoint", "ListAccessPoints", "ListFileSystems");
  private static final ExecutionAttribute<Long> STARTED =
      new ExecutionAttribute<>("efscsi.started");

  private final MeterRegistry registry;

  public ApiMetrics(MeterRegistry registry) {
    this.registry = registry;
    EFS_OPERATIONS.forEach(op -> {
      timer("efs", op);
      throttles("efs", op); // at 0 from the start, so rate() and alerts see the series
    });
    timer("sts", "AssumeRole");
    throttles("sts", "AssumeRole");
    S3FILES_OPERATIONS.forEach(op -> {
      timer("s3files", op);
      throttles("s3files", op);
    });
  }

  /** One API call made outside the SDK's pipeline, retries included. */
  public final class Call {
    private final String service;
    private final String request;
    private final long started = System.nanoTime();

    private Call(String service, String request) {
      this.service = service;
      this.request = request;
    }

    /** An attempt was throttled. */
    public void throttled() {
      throttles(service, request).increment();
    }

    public void succeeded() {
      timer(service, request).record(Duration.ofNanos(System.nanoTime() - started));
    }

    /** The call failed after its retries, with this error code. */
    public void failed(String code) {
      succeeded();
      errors(service, request, code).increment();
    }
  }

  /** Starts timing one call of {@code service}'s {@code request}. */
  public Call start(String service, String request) {
    return new Call(service, request);
  }

  private Counter errors(String service, String request, String code) {
    return Counter.builder(ERRORS)
        .description("AWS API calls that failed after retries")
        .tags("service", service, "request", request, "code", code)
        .register(registry);
  }

  private Counter throttles(String service, String request) {
    return Counter.builder(THROTTLES)
        .description("AWS API attempts that were throttled")
        .tags("service", service, "request", request)
        .register(registry);
  }

  private Timer timer(String service, String request) {
    return Timer.builder(DURATION)
        .description("AWS API call duration, retries included")
        .tags("service", service, "request", request)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry);
  }

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    attributes.putAttribute(STARTED, System.nanoTime());
  }

  @Override
  public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
    int status = context.httpResponse().statusCode();
    if (status == 429 || status == 503) {
      throttled(attributes);
    }
  }

  @Override
  public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
    record(attributes);
  }

  @Override
  public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
    record(attributes);
    Throwable e = context.exception();
    String code =
        switch (e) {
          case AwsServiceException a when a.awsErrorDetails() != null ->
              a.awsErrorDetails().errorCode();
          default -> e.getClass().getSimpleName();
        };
    errors(service(attributes), request(attributes), code).increment();
    if (e instanceof SdkException s
        && RetryUtils.isThrottlingException(s)
        && context.httpResponse().isEmpty()) {
      throttled(attributes);
    }
  }

  private void throttled(ExecutionAttributes attributes) {
    throttles(service(attributes), request(attributes)).increment();
  }

  private void record(ExecutionAttributes attributes) {
    Long started = attributes.getAttribute(STARTED);
    if (started != null) {
      timer(service(attributes), request(attributes))
          .record(Duration.ofNanos(System.nanoTime() - started));
    }
  }

  private static String service(ExecutionAttributes a) {
    String s = a.getAttribute(SdkExecutionAttribute.SERVICE_NAME);
    return s == null ? "unknown" : s.toLowerCase(java.util.Locale.ROOT);
  }

  private static String request(ExecutionAttributes a) {
    String s = a.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
    return s == null ? "unknown" : s;
  }
}

package io.efscsi.controller.cloud;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.retry.RetryUtils;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.HttpExecuteRequest;
import software.amazon.awssdk.http.HttpExecuteResponse;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.retries.api.AcquireInitialTokenRequest;
import software.amazon.awssdk.retries.api.AcquireInitialTokenResponse;
import software.amazon.awssdk.retries.api.RecordSuccessRequest;
import software.amazon.awssdk.retries.api.RefreshRetryTokenRequest;
import software.amazon.awssdk.retries.api.RefreshRetryTokenResponse;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.retries.api.RetryToken;
import software.amazon.awssdk.retries.api.TokenAcquisitionFailedException;

/**
 * Calls one AWS REST-JSON service for which the SDK has no client here, with the SDK's own parts:
 * its HTTP client, its SigV4 signer, its retry strategy (the one the SDK clients use, so throttling
 * and 5xx are retried and adaptive mode rate-limits the same way) and {@link ApiMetrics}. A failed
 * call ends as the SDK's {@link AwsServiceException} (with the error code from {@code
 * x-amzn-ErrorType} or the body's {@code __type}) or {@link SdkClientException}.
 */
final class RestJsonCaller {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** One request: method, path (already encoded), query, JSON body or null. */
  record Request(
      String operation,
      SdkHttpMethod method,
      String path,
      Map<String, String> query,
      JsonNode body) {}

  private final String service;
  private final String region;
  private final URI endpoint;
  private final SdkHttpClient http;
  private final AwsCredentialsProvider credentials;
  private final RetryStrategy retries;
  private final ApiMetrics metrics;
  private final AwsV4HttpSigner signer = AwsV4HttpSigner.create();

  RestJsonCaller(
      String service,
      String region,
      URI endpoint,
      SdkHttpClient http,
      AwsCredentialsProvider credentials,
      RetryStrategy retries,
      ApiMetrics metrics) {
    this.service = service;
    this.region = region;
    this.endpoint = endpoint;
    this.http = http;
    this.credentials = credentials;
    this.retries = retries;
    this.metrics = metrics;
  }

  /** The answer's JSON (an empty object for an empty body), after retries. */
  JsonNode call(Request request) {
    ApiMetrics.Call m = metrics.start(service, request.operation());
    AcquireInitialTokenResponse first =
        retries.acquireInitialToken(AcquireInitialTokenRequest.create(service));
    RetryToken token = first.token();
    Duration delay = first.delay();
    while (true) {
      sleep(delay);
      try {
        JsonNode out = attempt(request);
        retries.recordSuccess(RecordSuccessRequest.create(token));
        m.succeeded();
        return out;
      } catch (SdkException e) {
        if (RetryUtils.isThrottlingException(e)) {
          m.throttled();
        }
        try {
          RefreshRetryTokenResponse next =
              retries.refreshRetryToken(
                  RefreshRetryTokenRequest.builder().token(token).failure(e).build());
          token = next.token();
          delay = next.delay();
        } catch (TokenAcquisitionFailedException done) {
          m.failed(code(e));
          throw e;
        }
      }
    }
  }

  private JsonNode attempt(Request r) {
    byte[] body = r.body() == null ? null : bytes(r.body());
    SdkHttpFullRequest.Builder b =
        SdkHttpFullRequest.builder().method(r.method()).uri(endpoint).encodedPath(r.path());
    r.query().forEach(b::putRawQueryParameter);
    if (body != null) {
      b.putHeader("Content-Type", "application/json")
          .putHeader("Content-Length", Integer.toString(body.length));
    }
    SignedRequest signed;
    try {
      signed =
          signer.sign(s ->
              s.identity(credentials.resolveCredentials())
                  .request(b.build())
                  .payload(body == null ? null : ContentStreamProvider.fromByteArray(body))
                  .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, service)
                  .putProperty(AwsV4HttpSigner.REGION_NAME, region));
    } catch (SdkException e) {
      throw e;
    } catch (RuntimeException e) {
      throw SdkClientException.create("cannot sign the " + r.operation() + " request", e);
    }
    HttpExecuteRequest execute =
        HttpExecuteRequest.builder()
            .request(signed.request())
            .contentStreamProvider(signed.payload().orElse(null))
            .build();
    HttpExecuteResponse response;
    byte[] answer;
    try {
      response = http.prepareRequest(execute).call();
      Optional<? extends InputStream> in = response.responseBody();
      try (InputStream s = in.isPresent() ? in.get() : InputStream.nullInputStream()) {
        answer = s.readAllBytes();
      }
    } catch (IOException e) {
      throw SdkClientException.create(
          "cannot reach " + service + " at " + endpoint + ": " + e.getMessage(), e);
    }
    int status = response.httpResponse().statusCode();
    JsonNode json = parse(answer);
    if (status / 100 == 2) {
      return json;
    }
    String code =
        response
            .httpResponse()
            .firstMatchingHeader("x-amzn-ErrorType")
            .map(t -> t.split(":", 2)[0])
            .orElseGet(() -> json.path("__type").asText(json.path("code").asText("")));
    code = code.substring(code.lastIndexOf('#') + 1);
    String message = json.path("message").asText(json.path("Message").asText(""));
    throw new ServiceError(
        AwsServiceException.builder()
            .statusCode(status)
            .message(message)
            .awsErrorDetails(
                AwsErrorDetails.builder()
                    .errorCode(code.isEmpty() ? "HTTP" + status : code)
                    .errorMessage(message)
                    .serviceName(service)
                    .sdkHttpResponse(response.httpResponse())
                    .build()),
        json);
  }

  /** An error answer: the SDK's exception, with the body for fields such as resourceId. */
  static final class ServiceError extends AwsServiceException {
    private static final long serialVersionUID = 1L;
    private final transient JsonNode body;

    ServiceError(AwsServiceException.Builder b, JsonNode body) {
      super(b);
      this.body = body;
    }

    JsonNode body() {
      return body;
    }
  }

  private static String code(SdkException e) {
    if (e instanceof AwsServiceException a && a.awsErrorDetails() != null) {
      return a.awsErrorDetails().errorCode();
    }
    return e.getClass().getSimpleName();
  }

  private static byte[] bytes(JsonNode n) {
    try {
      return JSON.writeValueAsBytes(n);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode parse(byte[] b) {
    if (b.length == 0) {
      return JSON.createObjectNode();
    }
    try {
      return JSON.readTree(b);
    } catch (IOException e) {
      throw SdkClientException.create("an answer that is not JSON: " + e.getMessage(), e);
    }
  }

  static ObjectMapper json() {
    return JSON;
  }

  private static void sleep(Duration d) {
    if (d.isZero() || d.isNegative()) {
      return;
    }
    try {
      Thread.sleep(d);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw SdkClientException.create("interrupted while waiting to retry", e);
    }
  }
}

package io.efscsi.controller.cloud;

import io.efscsi.controller.cloud.CloudException.Reason;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.PartitionMetadata;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.services.efs.EfsClient;
import software.amazon.awssdk.services.efs.EfsClientBuilder;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.StsClientBuilder;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider;

/**
 * The controller's AWS clients: one EFS client on the default credentials chain, and one per
 * assumed role (cross-account provisioner secrets), each built once and kept, its STS credentials
 * refreshed by the SDK before they expire. All share one HTTP client and one retry policy: the
 * SDK's standard retries, 5 attempts, as the Go driver; with adaptive retries each client also
 * limits its requests in flight ({@link AdaptiveConcurrency}).
 */
public final class Clouds implements CloudSource, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Clouds.class);
  static final int MAX_ATTEMPTS = 5;
  static final int ADAPTIVE_INITIAL_WINDOW = 16;
  static final int ADAPTIVE_MAX_WINDOW = 64;
  static final Duration ADAPTIVE_MAX_WAIT = Duration.ofSeconds(20);

  /** Where and how to reach AWS. Endpoints are overrides (AWS_ENDPOINT_URL_EFS/_STS/_S3FILES). */
  public record Settings(
      Region region,
      Optional<URI> efsEndpoint,
      Optional<URI> stsEndpoint,
      boolean adaptiveRetries,
      boolean fips,
      Optional<URI> s3filesEndpoint) {

    public Settings(
        Region region,
        Optional<URI> efsEndpoint,
        Optional<URI> stsEndpoint,
        boolean adaptiveRetries,
        boolean fips) {
      this(region, efsEndpoint, stsEndpoint, adaptiveRetries, fips, Optional.empty());
    }

    /**
     * The S3 Files API endpoint: the override, else {@code https://s3files[-fips].<region>.<dns
     * suffix>}.
     */
    public URI s3filesUri() {
      return s3filesEndpoint.orElseGet(() ->
          URI.create(
              "https://s3files"
                  + (fips ? "-fips" : "")
                  + "."
                  + region.id()
                  + "."
                  + PartitionMetadata.of(region).dnsSuffix()));
    }
  }

  private final Settings settings;
  private final ApiMetrics metrics;
  private final SdkHttpClient http = UrlConnectionHttpClient.builder().build();
  private volatile AwsCloud defaultCloud;
  private volatile S3FilesCloud s3files;
  private final Map<String, AwsCloud> byRole = new ConcurrentHashMap<>();
  private final Map<String, AutoCloseable> closeables = new ConcurrentHashMap<>();
  private volatile StsClient sts;

  public Clouds(Settings settings, ApiMetrics metrics) {
    this.settings = settings;
    this.metrics = metrics;
  }

  /**
   * Built on the first call that needs it: a replica that is not the leader (the chart runs two)
   * never builds one. Building any SDK client loads the metadata of every AWS service and region
   * (docs/architecture.md), which stays in the heap.
   */
  @Override
  public Cloud defaultCloud() {
    AwsCloud c = defaultCloud;
    if (c != null) {
      return c;
    }
    synchronized (this) {
      if (defaultCloud == null) {
        EfsClient efs = efs(DefaultCredentialsProvider.builder().build());
        closeables.put("default", efs);
        defaultCloud = new AwsCloud("default", efs);
      }
      return defaultCloud;
    }
  }

  /**
   * Built on first use: its JSON mapping (Jackson's databind, some 400 classes) is not loaded into
   * a controller that never sees an S3 Files volume.
   */
  @Override
  public Cloud s3files() {
    S3FilesCloud c = s3files;
    if (c != null) {
      return c;
    }
    synchronized (this) {
      if (s3files == null) {
        DefaultCredentialsProvider credentials = DefaultCredentialsProvider.builder().build();
        closeables.put("s3files", credentials);
        s3files =
            new S3FilesCloud(
                new RestJsonCaller(
                    "s3files",
                    settings.region().id(),
                    settings.s3filesUri(),
                    http,
                    credentials,
                    retryStrategy(),
                    metrics));
      }
      return s3files;
    }
  }

  /**
   * The client acting as {@code roleArn}; built (and the role assumed once, to fail early with a
   * clear message) on first use, then reused.
   */
  @Override
  public Cloud forRole(String roleArn, Optional<String> externalId) {
    String key = roleArn + "\u0000" + externalId.orElse("");
    AwsCloud c = byRole.get(key);
    if (c != null) {
      return c;
    }
    synchronized (this) {
      c = byRole.get(key);
      if (c == null) {
        c = assume(roleArn, externalId);
        byRole.put(key, c);
      }
      return c;
    }
  }

  private AwsCloud assume(String roleArn, Optional<String> externalId) {
    StsAssumeRoleCredentialsProvider credentials =
        StsAssumeRoleCredentialsProvider.builder()
            .stsClient(sts())
            .refreshRequest(r -> {
              r.roleArn(roleArn).roleSessionName("efs-csi-controller");
              externalId.ifPresent(r::externalId);
            })
            .build();
    try {
      credentials.resolveCredentials();
    } catch (SdkException e) {
      credentials.close();
      throw new CloudException(
          Reason.ACCESS_DENIED,
          "Unable to initialize aws cloud: "
              + e.getMessage()
              + ". Please verify role has the correct AWS permissions for cross account mount",
          e);
    }
    EfsClient efs = efs(credentials);
    closeables.put(roleArn + "/" + externalId.orElse("") + "/creds", credentials);
    closeables.put(roleArn + "/" + externalId.orElse(""), efs);
    log.info("assumed role {} for cross-account provisioning", roleArn);
    return new AwsCloud("role:" + roleArn + ":" + externalId.orElse(""), efs);
  }

  private synchronized StsClient sts() {
    if (sts == null) {
      StsClientBuilder b =
          StsClient.builder()
              .region(settings.region())
              .httpClient(http)
              .credentialsProvider(DefaultCredentialsProvider.builder().build())
              .overrideConfiguration(override());
      settings.stsEndpoint().ifPresent(b::endpointOverride);
      sts = b.build();
      closeables.put("sts", sts);
    }
    return sts;
  }

  private EfsClient efs(AwsCredentialsProvider credentials) {
    EfsClientBuilder b =
        EfsClient.builder()
            .region(settings.region())
            .httpClient(http)
            .credentialsProvider(credentials)
            .fipsEnabled(settings.fips())
            .overrideConfiguration(override());
    settings.efsEndpoint().ifPresent(b::endpointOverride);
    return b.build();
  }

  /**
   * Standard SDK retries, 5 attempts; with adaptive retries, under our own {@link
   * AdaptiveConcurrency} per client (not the SDK's adaptive strategy, which serialises a burst at
   * its floor rate).
   */
  private ClientOverrideConfiguration override() {
    ClientOverrideConfiguration.Builder b =
        ClientOverrideConfiguration.builder()
            .retryStrategy(retryStrategy())
            .addExecutionInterceptor(metrics);
    if (settings.adaptiveRetries()) {
      b.addExecutionInterceptor(
          new AdaptiveConcurrency(
              ADAPTIVE_INITIAL_WINDOW, ADAPTIVE_MAX_WINDOW, ADAPTIVE_MAX_WAIT, System::nanoTime));
    }
    return b.build();
  }

  /**
   * The SDK's standard retries, 5 attempts, as the Go driver; never its adaptive strategy, which
   * serialises a burst at its floor rate (see {@link AdaptiveConcurrency}).
   */
  private static RetryStrategy retryStrategy() {
    return AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(MAX_ATTEMPTS).build();
  }

  @Override
  public void close() {
    closeables
        .values()
        .forEach(c -> {
          try {
            c.close();
          } catch (Exception e) {
            log.debug("closing an AWS client: {}", e.toString());
          }
        });
    http.close();
  }
}

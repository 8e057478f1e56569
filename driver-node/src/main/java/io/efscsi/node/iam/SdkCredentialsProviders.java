package io.efscsi.node.iam;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleWithWebIdentityCredentialsProvider;
import software.amazon.awssdk.services.sts.model.AssumeRoleWithWebIdentityRequest;
import software.amazon.awssdk.utils.SdkAutoCloseable;

/**
 * The AWS SDK's credential providers for the {@code iam} mount options, one cached provider per
 * source (so temporary credentials are reused and refreshed by the SDK):
 *
 * <ul>
 *   <li>{@code awsprofile=p}: the profile from the shared credentials and config files
 *   <li>{@code rolearn=…,jwtpath=…}: STS AssumeRoleWithWebIdentity in the node's region, reading
 *       the token file on every refresh
 *   <li>neither: the SDK default chain (env keys, IRSA web identity, EKS Pod Identity / container
 *       credentials, instance profile)
 * </ul>
 */
public final class SdkCredentialsProviders implements CredentialsProviders, AutoCloseable {

  static final String ROLE_SESSION_NAME = "efs-csi-node";

  private final Region region;
  private final Map<IamCredentialsSource, AwsCredentialsProvider> providers =
      new ConcurrentHashMap<>();
  private final Queue<SdkAutoCloseable> closeables = new ConcurrentLinkedQueue<>();

  /** {@code region}: where STS is called for {@code rolearn}/{@code jwtpath}. */
  public SdkCredentialsProviders(String region) {
    this.region = Region.of(region);
  }

  @Override
  public AwsCredentialsProvider forSource(IamCredentialsSource source) {
    return providers.computeIfAbsent(source, this::create);
  }

  private AwsCredentialsProvider create(IamCredentialsSource s) {
    if (s.awsProfile().isPresent()) {
      return ProfileCredentialsProvider.builder().profileName(s.awsProfile().get()).build();
    }
    if (s.roleArn().isPresent() != s.jwtPath().isPresent()) {
      throw DriverException.invalidArgument(
          "rolearn and jwtpath go together, got %s", CredentialsProviders.describe(s));
    }
    if (s.roleArn().isPresent()) {
      return webIdentity(s.roleArn().get(), Path.of(s.jwtPath().get()));
    }
    return DefaultCredentialsProvider.builder().build();
  }

  private AwsCredentialsProvider webIdentity(String roleArn, Path tokenFile) {
    StsClient sts =
        StsClient.builder()
            .region(region)
            .httpClient(UrlConnectionHttpClient.create())
            .credentialsProvider(AnonymousCredentialsProvider.create())
            .build();
    closeables.add(sts);
    return StsAssumeRoleWithWebIdentityCredentialsProvider.builder()
        .stsClient(sts)
        .refreshRequest(() ->
            AssumeRoleWithWebIdentityRequest.builder()
                .roleArn(roleArn)
                .roleSessionName(ROLE_SESSION_NAME)
                .webIdentityToken(readToken(tokenFile))
                .build())
        .build();
  }

  private static String readToken(Path tokenFile) {
    try {
      return Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the web identity token " + tokenFile, e);
    }
  }

  @Override
  public void close() {
    providers
        .values()
        .forEach(p -> {
          if (p instanceof SdkAutoCloseable c) {
            c.close();
          }
        });
    providers.clear();
  }
}

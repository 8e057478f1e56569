package io.efscsi.node.iam;

import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;

/**
 * Where a mount's IAM credentials come from: the port between {@link ClientCertificates} and the
 * AWS SDK's credential providers ({@link SdkCredentialsProviders} in production, a static provider
 * in tests).
 */
@FunctionalInterface
public interface CredentialsProviders {

  /** The provider for this source; the same source may be asked for many times. */
  AwsCredentialsProvider forSource(IamCredentialsSource source);

  /** Describes a source for messages ({@code awsprofile=p}, {@code rolearn=…}, default chain). */
  static String describe(IamCredentialsSource s) {
    if (s.awsProfile().isPresent()) {
      return "awsprofile=" + s.awsProfile().get();
    }
    if (s.roleArn().isPresent()) {
      return "rolearn=" + s.roleArn().get() + ",jwtpath=" + s.jwtPath().orElse("");
    }
    return "the default credential chain (IRSA, Pod Identity, instance profile)";
  }
}

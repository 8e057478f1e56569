package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.CloudSource;
import java.util.Map;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * The provisioner secret's cross-account keys: {@code awsRoleArn}, {@code externalId} and {@code
 * crossaccount} (efs-utils DNS resolution instead of mount target IPs).
 */
record CrossAccount(Optional<String> roleArn, Optional<String> externalId, boolean dns) {

  static final String ROLE_ARN = "awsRoleArn";
  static final String EXTERNAL_ID = "externalId";
  static final String CROSS_ACCOUNT = "crossaccount";

  static CrossAccount parse(Map<String, String> secrets) {
    Optional<String> role = Optional.ofNullable(secrets.get(ROLE_ARN)).filter(s -> !s.isBlank());
    Optional<String> external =
        Optional.ofNullable(secrets.get(EXTERNAL_ID)).filter(s -> !s.isBlank());
    boolean dns = false;
    String v = secrets.get(CROSS_ACCOUNT);
    if (v != null) {
      String b = ProvisioningParameters.goBool(v);
      if (b == null) {
        throw DriverException.invalidArgument("crossaccount parameter must have boolean value.");
      }
      dns = b.equals("true");
    }
    return new CrossAccount(role, external, dns);
  }

  Cloud cloud(CloudSource clouds) {
    return roleArn.isPresent() ? clouds.forRole(roleArn.get(), externalId) : clouds.defaultCloud();
  }

  /**
   * The client for the volume's backend. S3 Files calls use the controller's own credentials
   * whatever the secret says, as the Go driver's S3 Files client does (it is never built with the
   * role); a role in the secret is then only worth a warning.
   */
  Cloud cloud(CloudSource clouds, boolean s3files, String volume) {
    if (!s3files) {
      return cloud(clouds);
    }
    roleArn.ifPresent(r ->
        LoggerFactory.getLogger(CrossAccount.class)
            .warn(
                "{}: the provisioner secret's {} {} is not used for Amazon S3 Files (as in the Go"
                    + " driver): S3 Files calls use the controller's own credentials",
                volume,
                ROLE_ARN,
                r));
    return clouds.s3files();
  }
}

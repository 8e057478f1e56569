package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.CloudSource;
import java.util.Map;
import java.util.Optional;

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
}

package io.efscsi.controller.cloud;

import java.util.Optional;

/** Hands out {@link Cloud} clients: the controller's own, or one acting as an assumed role. */
public interface CloudSource {

  Cloud defaultCloud();

  /**
   * The Amazon S3 Files client, on the controller's own credentials. As in the Go driver, S3 Files
   * calls never act as a provisioner secret's role.
   */
  Cloud s3files();

  /**
   * A client acting as {@code roleArn}; built once per role and external id, then reused.
   *
   * @throws CloudException ACCESS_DENIED when the role cannot be assumed
   */
  Cloud forRole(String roleArn, Optional<String> externalId);
}

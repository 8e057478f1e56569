package io.efscsi.node.takeover;

import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.supervisor.ProxySpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How one of the Go driver's mounts is taken over: our proxy on the same port with the equivalent
 * upstream, and the mount point(s) on that port as its users.
 *
 * @param key the proxy's key; {@code efs-utils:<stem>}, never the key of a volume of ours, so no
 *     new volume is ever handed this proxy or its port
 * @param port the port the kernel mount uses
 * @param users the mount points on the port (the pods' target paths)
 * @param proxy what the proxy forwards to, without the client certificate (made at the takeover)
 * @param certificate the client certificate to present, for TLS mounts
 * @param state what efs-utils recorded
 */
public record TakeoverPlan(
    String key,
    int port,
    List<String> users,
    ProxySpec proxy,
    Optional<Certificate> certificate,
    EfsUtilsState state) {

  public TakeoverPlan {
    users = List.copyOf(users);
  }

  /**
   * The client certificate: the same file system, access point and IAM identity as efs-utils'.
   *
   * @param efsUtilsCertificate efs-utils' certificate, here, when it survived
   * @param efsUtilsKey efs-utils' shared private key, here, when it survived
   */
  public record Certificate(
      String fileSystemId,
      Optional<String> accessPointId,
      boolean iam,
      IamCredentialsSource credentials,
      String region,
      Optional<Path> efsUtilsCertificate,
      Optional<Path> efsUtilsKey) {}
}

package io.efscsi.node.takeover;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What efs-utils recorded about one proxied mount in {@code /var/run/efs}: the one-line JSON state
 * file {@code <fsid>.<mountpoint with / as .>.<port>} and the tunnel's {@code
 * stunnel-config.<same>}. Paths are as recorded (seen from the Go driver's container); {@link
 * EfsUtilsDirs} maps them to where this container sees them.
 *
 * @param stem the file name stem ({@code fs-….var.lib.kubelet.….20123})
 * @param tunnel which tunnel efs-utils ran, and so which BindClientToPartition it spoke
 * @param fileSystemId {@code fs-…}
 * @param mountPoint the recorded mount point ({@code mountpoint})
 * @param port the 127.0.0.1 port ({@code accept} and the stem agree)
 * @param upstreamHost the mount target's DNS name or IP ({@code connect}, without the port)
 * @param upstreamPort the mount target's port ({@code connect}; 2049)
 * @param tls the tunnel speaks TLS to the mount target
 * @param checkHost the verified server name ({@code checkHost}); empty when efs-utils did not check
 * @param verifyLevel stunnel's {@code verify} (2 by default; 0 = no CA check)
 * @param caFile the recorded CA bundle ({@code CAfile})
 * @param certificate the recorded client certificate ({@code cert} = state {@code certificate})
 * @param privateKey the recorded shared key ({@code key} = state {@code privateKey})
 * @param accessPointId the access point in the certificate ({@code accessPoint})
 * @param awsCredentialsMethod where the IAM credentials came from; present exactly for {@code iam}
 * @param region the region the certificate was signed for ({@code region})
 * @param tunnelPid the recorded tunnel pid (a dead container's pid after the swap)
 * @param command the tunnel's command line as recorded ({@code cmd}): what a handback gives back
 */
public record EfsUtilsState(
    String stem,
    Tunnel tunnel,
    String fileSystemId,
    String mountPoint,
    int port,
    String upstreamHost,
    int upstreamPort,
    boolean tls,
    Optional<String> checkHost,
    OptionalInt verifyLevel,
    Optional<String> caFile,
    Optional<String> certificate,
    Optional<String> privateKey,
    Optional<String> accessPointId,
    Optional<String> awsCredentialsMethod,
    Optional<String> region,
    long tunnelPid,
    List<String> command) {

  public EfsUtilsState {
    command = List.copyOf(command);
  }

  /** The tunnel efs-utils started for the mount. */
  public enum Tunnel {
    /** stunnel: efs-utils 1.x, or 2.x/3.x with the {@code stunnel} option; no partition binding. */
    STUNNEL,
    /** efs-proxy of efs-utils 2.x: BindClientToPartition program 100200. */
    EFS_PROXY_V2,
    /** efs-proxy of efs-utils 3.x: BindClientToPartition program 400123 ("AWSFILE"). */
    EFS_PROXY_V3
  }

  /** The mount uses IAM authorization (efs-utils records the credentials' source only then). */
  public boolean iam() {
    return awsCredentialsMethod.isPresent();
  }
}

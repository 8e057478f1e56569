package io.efscsi.node.handback;

import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.supervisor.Handoff.Held;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What a handback does on a node: each proxy of ours is handed back (efs-utils' files written, the
 * port handed over to the watchdog's tunnel), idle (no mount uses its port: stopped once the Go
 * driver runs), or refused (left as it is, with the reason).
 */
public record HandbackPlan(
    GoDriverImage image, List<Handed> handed, List<Idle> idle, List<Refused> refused) {

  public HandbackPlan {
    handed = List.copyOf(handed);
    idle = List.copyOf(idle);
    refused = List.copyOf(refused);
  }

  /** The efs-utils line written for. */
  public EfsUtilsRelease release() {
    return image.release();
  }

  /**
   * The tunnel efs-utils' watchdog starts for a mount, and why that one.
   *
   * @param command its command line, as the state records it ({@code cmd})
   * @param efsProxy efs-proxy (else stunnel): decides the tunnel config's keys
   * @param configKept efs-utils' own tunnel config of a taken-over mount stays as it recorded it
   *     (the handback writes none)
   * @param why where the binary comes from, for the plan
   */
  public record Tunnel(List<String> command, boolean efsProxy, boolean configKept, String why) {

    public Tunnel {
      command = List.copyOf(command);
    }

    public String binary() {
      return command.getFirst();
    }
  }

  /**
   * One port handed back.
   *
   * @param record our proxy, as its record says
   * @param stem efs-utils' name for the mount: {@code <fs-id>.<mount point, / as .>.<port>}
   * @param fileSystemId {@code fs-…}
   * @param mountPoint the mount point efs-utils' state names (the NFS mount on the port)
   * @param alsoOnPort the port's other mount points (bind mounts, other volumes sharing the proxy)
   * @param connect the mount target, {@code host:port}
   * @param tls the tunnel speaks TLS
   * @param checkHost the server name the tunnel checks; empty when ours did not check it
   * @param ca the CA bundle our proxy trusts: empty for the Amazon roots (efs-utils' default file)
   * @param certificate the client certificate, for TLS
   * @param region the file system's region ({@code region} in efs-utils' files)
   * @param tunnel the tunnel efs-utils' watchdog will start for it
   */
  public record Handed(
      Held record,
      String stem,
      String fileSystemId,
      String mountPoint,
      List<String> alsoOnPort,
      String connect,
      boolean tls,
      Optional<String> checkHost,
      Optional<Path> ca,
      Optional<Certificate> certificate,
      String region,
      Tunnel tunnel) {

    public Handed {
      alsoOnPort = List.copyOf(alsoOnPort);
    }

    public int port() {
      return record.port();
    }
  }

  /**
   * The client certificate the tunnel presents: same file system, access point and IAM identity.
   *
   * @param request what it certifies (and what efs-utils' watchdog renews)
   * @param credentialsMethod efs-utils' {@code awsCredentialsMethod}, for IAM
   * @param profile the named profile efs-utils 3.x writes into an IAM mount's tunnel config ({@code
   *     profile}: the {@code awsprofile} mount option, else {@code AWS_PROFILE})
   * @param ourCertificate our proxy's certificate now
   * @param ourKey its private key
   */
  public record Certificate(
      ClientCertificates.Request request,
      Optional<String> credentialsMethod,
      Optional<String> profile,
      Path ourCertificate,
      Path ourKey) {}

  /** A proxy no mount uses. */
  public record Idle(Held record) {}

  /** A proxy left as it is, and why. */
  public record Refused(Held record, List<String> mountPoints, String reason) {

    public Refused {
      mountPoints = List.copyOf(mountPoints);
    }
  }
}

package io.efscsi.node.volume;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Everything NodeStage needs to mount one volume, worked out from its volume id, volume attributes
 * and mount flags by {@link MountPlanner}: the proxy's upstream and TLS/IAM settings, the NFS
 * options for {@code mount -t nfs4} and the export path.
 *
 * @param fileSystemId {@code fs-…}
 * @param accessPointId {@code fsap-…} when the volume uses an access point
 * @param exportPath the path on the server to mount ({@code /} or the handle's subpath, cleaned)
 * @param upstreamHost the mount target's DNS name or IP address the proxy connects to
 * @param upstreamPort the mount target's NFS port (2049)
 * @param tls encryption in transit (the proxy speaks TLS to the mount target)
 * @param serverName the TLS server name (SNI and hostname check), {@code
 *     fs-….efs.<region>.<suffix>}
 * @param iam the client certificate carries IAM credentials ({@code iam} mount option)
 * @param caFile a CA bundle to trust instead of the bundled Amazon roots ({@code cafile=})
 * @param verifyHostname check the server certificate's name ({@code verify=0} turns it off)
 * @param credentials how IAM credentials are obtained when {@code iam} is set
 * @param nfsOptions options for {@code mount -t nfs4}, in order, without {@code port=} (the node
 *     adds the proxy's port)
 * @param readOnly the staging mount is read-only
 * @param s3files the file system is an Amazon S3 Files one ({@code s3files:} handle): its client
 *     certificate's IAM signature is for service {@code s3files}
 */
public record MountPlan(
    String fileSystemId,
    Optional<String> accessPointId,
    String exportPath,
    String upstreamHost,
    int upstreamPort,
    boolean tls,
    String serverName,
    boolean iam,
    Optional<Path> caFile,
    boolean verifyHostname,
    IamCredentialsSource credentials,
    List<String> nfsOptions,
    boolean readOnly,
    boolean s3files) {

  public MountPlan {
    nfsOptions = List.copyOf(nfsOptions);
  }

  /** The SigV4 signing name of the client certificate's IAM signature. */
  public String signingName() {
    return s3files ? "s3files" : "elasticfilesystem";
  }

  /**
   * Where IAM credentials come from ({@code awsprofile=}, {@code rolearn=} + {@code jwtpath=}, or
   * the SDK default chain: IRSA, Pod Identity, instance profile).
   */
  public record IamCredentialsSource(
      Optional<String> awsProfile, Optional<String> roleArn, Optional<String> jwtPath) {
    public static final IamCredentialsSource DEFAULT_CHAIN =
        new IamCredentialsSource(Optional.empty(), Optional.empty(), Optional.empty());
  }

  /**
   * The key that decides which volumes share one proxy: everything the proxy's behaviour depends on
   * (file system, access point, upstream, TLS, IAM, CA, verification, credentials source). Volumes
   * of one file system with the same key share a proxy (and the supervisor's port). An S3 Files
   * volume's key starts with {@code s3files:}; an EFS one's is unchanged from before S3 Files
   * support, so proxies adopted after an upgrade keep their keys.
   */
  public String proxyKey() {
    return (s3files ? "s3files:" : "")
        + String.join(
            "|",
            fileSystemId,
            accessPointId.orElse("-"),
            upstreamHost + ":" + upstreamPort,
            tls ? "tls" : "notls",
            serverName,
            iam ? "iam" : "noiam",
            caFile.map(Path::toString).orElse("-"),
            verifyHostname ? "verify" : "noverify",
            credentials.awsProfile().orElse("-"),
            credentials.roleArn().orElse("-"),
            credentials.jwtPath().orElse("-"));
  }
}

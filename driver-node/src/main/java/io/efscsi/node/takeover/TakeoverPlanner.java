package io.efscsi.node.takeover;

import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.efscsi.supervisor.ProxySpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Maps efs-utils' state of one mount to our proxy: the same mount target, TLS with the same server
 * name and CA, a client certificate for the same access point and IAM identity, and the
 * BindClientToPartition that efs-utils' tunnel spoke (none for stunnel, program 100200 for
 * efs-proxy 2.x, 400123 for 3.x). What cannot be reproduced exactly is refused with the reason.
 */
public final class TakeoverPlanner {

  /** Keys of taken-over proxies start with this; no volume of ours has such a key. */
  public static final String KEY_PREFIX = "efs-utils:";

  private final EfsUtilsDirs dirs;

  public TakeoverPlanner(EfsUtilsDirs dirs) {
    this.dirs = dirs;
  }

  /** The plan for a parsed state whose port carries the given mount points. */
  public TakeoverPlan plan(EfsUtilsState s, List<String> mountPoints)
      throws UnusableStateException {
    if (!mountPoints.contains(s.mountPoint())) {
      throw new UnusableStateException(
          "efs-utils recorded mount point "
              + s.mountPoint()
              + " for port "
              + s.port()
              + " but the port carries "
              + String.join(", ", mountPoints));
    }
    Optional<TakeoverPlan.Certificate> cert = Optional.empty();
    ProxySpec spec;
    if (s.tls()) {
      boolean verifyCa = s.verifyLevel().orElse(2) > 0;
      // as our own volumes with verify=0: the name is not checked (the CA chain still is)
      spec =
          new ProxySpec(
              s.upstreamHost(),
              s.upstreamPort(),
              true,
              s.checkHost().orElse(s.upstreamHost()),
              verifyCa && s.checkHost().isPresent(),
              verifyCa ? caFile(s) : Optional.empty(),
              Optional.empty(), // the certificate is made when the port is taken (Takeover)
              bind(s.tunnel()));
      cert = Optional.of(certificate(s));
    } else {
      spec =
          new ProxySpec(
              s.upstreamHost(),
              s.upstreamPort(),
              false,
              s.upstreamHost(),
              false,
              Optional.empty(),
              Optional.empty(),
              bind(s.tunnel()));
    }
    return new TakeoverPlan(KEY_PREFIX + s.stem(), s.port(), mountPoints, spec, cert, s);
  }

  private static BindProtocol bind(EfsUtilsState.Tunnel t) {
    return switch (t) {
      case STUNNEL -> BindProtocol.NONE;
      case EFS_PROXY_V2 -> BindProtocol.EFS_V2;
      case EFS_PROXY_V3 -> BindProtocol.AWSFILE_V3;
    };
  }

  /** The recorded CA bundle here; efs-utils' default bundle (Amazon Root CA 1-4) is our default. */
  private Optional<Path> caFile(EfsUtilsState s) throws UnusableStateException {
    if (s.caFile().isEmpty()) {
      throw new UnusableStateException("the TLS tunnel verifies the server but names no CAfile");
    }
    String recorded = s.caFile().get();
    Optional<Path> here = dirs.resolve(recorded);
    if (here.isPresent()) {
      return here;
    }
    if (recorded.equals(EfsUtilsDirs.DEFAULT_CA_FILE)) {
      return Optional.empty(); // the same Amazon roots are bundled with our proxy
    }
    throw new UnusableStateException(
        "the CA file "
            + recorded
            + " the tunnel trusted is not readable here (mount its directory into the node"
            + " plugin)");
  }

  private TakeoverPlan.Certificate certificate(EfsUtilsState s) throws UnusableStateException {
    IamCredentialsSource creds = IamCredentialsSource.DEFAULT_CHAIN;
    if (s.iam()) {
      creds = credentials(s.awsCredentialsMethod().get());
    }
    if (s.region().isEmpty()) {
      throw new UnusableStateException("the TLS state records no region for its certificate");
    }
    return new TakeoverPlan.Certificate(
        s.fileSystemId(),
        s.accessPointId(),
        s.iam(),
        creds,
        s.region().get(),
        s.certificate().flatMap(dirs::resolve),
        s.privateKey().flatMap(dirs::resolve));
  }

  /**
   * The same IAM identity as efs-utils' {@code awsCredentialsMethod}: a named profile, the web
   * identity role and token file, or the node's own chain (Pod Identity, instance profile).
   */
  static IamCredentialsSource credentials(String method) throws UnusableStateException {
    int colon = method.indexOf(':');
    String kind = colon < 0 ? method : method.substring(0, colon);
    String arg = colon < 0 ? "" : method.substring(colon + 1);
    return switch (kind) {
      case "credentials", "config", "named_profile" ->
          new IamCredentialsSource(Optional.of(arg), Optional.empty(), Optional.empty());
      case "webidentity" -> {
        int comma = arg.lastIndexOf(',');
        if (comma <= 0) {
          throw new UnusableStateException("IAM credentials source " + method + " is not arn,file");
        }
        yield new IamCredentialsSource(
            Optional.empty(),
            Optional.of(arg.substring(0, comma)),
            Optional.of(arg.substring(comma + 1)));
      }
      case "podidentity", "metadata" -> IamCredentialsSource.DEFAULT_CHAIN;
      default ->
          throw new UnusableStateException(
              "IAM credentials source "
                  + method
                  + " (awscredsuri) cannot be reproduced by this driver");
    };
  }
}

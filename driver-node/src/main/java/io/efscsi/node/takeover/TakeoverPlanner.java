package io.efscsi.node.takeover;

import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    Map<String, String> m = new LinkedHashMap<>();
    m.put(ProxyConfig.Keys.LISTEN_PORT, Integer.toString(s.port()));
    m.put(ProxyConfig.Keys.UPSTREAM_HOST, s.upstreamHost());
    m.put(ProxyConfig.Keys.UPSTREAM_PORT, Integer.toString(s.upstreamPort()));
    m.put(ProxyConfig.Keys.TLS, Boolean.toString(s.tls()));
    m.put(ProxyConfig.Keys.BIND, bind(s.tunnel()));
    Optional<TakeoverPlan.Certificate> cert = Optional.empty();
    if (s.tls()) {
      boolean verifyCa = s.verifyLevel().orElse(2) > 0;
      m.put(ProxyConfig.Keys.SERVER_NAME, s.checkHost().orElse(s.upstreamHost()));
      // as our own volumes with verify=0: the name is not checked (the CA chain still is)
      m.put(
          ProxyConfig.Keys.VERIFY_HOSTNAME,
          Boolean.toString(verifyCa && s.checkHost().isPresent()));
      if (verifyCa) {
        caFile(s).ifPresent(ca -> m.put(ProxyConfig.Keys.CA_FILE, ca.toString()));
      }
      cert = Optional.of(certificate(s));
    } else {
      m.put(ProxyConfig.Keys.SERVER_NAME, s.upstreamHost());
      m.put(ProxyConfig.Keys.VERIFY_HOSTNAME, "false");
    }
    ProxyConfig.fromMap(m); // validates
    m.remove(ProxyConfig.Keys.LISTEN_PORT);
    return new TakeoverPlan(KEY_PREFIX + s.stem(), s.port(), mountPoints, m, cert, s);
  }

  private static String bind(EfsUtilsState.Tunnel t) {
    return switch (t) {
      case STUNNEL -> "none";
      case EFS_PROXY_V2 -> "efs-v2";
      case EFS_PROXY_V3 -> "awsfile-v3";
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

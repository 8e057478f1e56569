package io.efscsi.node.handback;

import io.efscsi.node.handback.HandbackPlan.Certificate;
import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.handback.HandbackPlan.Idle;
import io.efscsi.node.handback.HandbackPlan.Refused;
import io.efscsi.node.handback.HandbackPlan.Tunnel;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.IssuedCertificates;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.takeover.EfsUtilsState;
import io.efscsi.node.takeover.EfsUtilsStateParser;
import io.efscsi.node.takeover.TakeoverPlan;
import io.efscsi.node.takeover.TakeoverPlanner;
import io.efscsi.node.takeover.UnusableStateException;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ConfigException;
import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPresence;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Works out, for each proxy of ours, what efs-utils would have recorded had it made the mount: the
 * state's name and mount point, the tunnel's upstream and TLS settings, the client certificate's
 * identity and how efs-utils' watchdog renews it. A proxy whose behaviour the target efs-utils
 * cannot reproduce, or whose state cannot be written safely, is refused with the reason.
 */
public final class HandbackPlanner {

  private static final Pattern KEY_FS = Pattern.compile("(fs-[0-9a-f]+)\\|.*");
  private static final Pattern STEM =
      Pattern.compile("(fs-[0-9a-f]+)\\.(.+)\\.([0-9]{1,5})", Pattern.DOTALL);
  private static final Pattern REGION_IN_NAME =
      Pattern.compile("fs-[0-9a-f]+\\.(?:s3files|efs)\\.([a-z0-9-]+)\\..*");

  /** The longest file name Linux takes: {@code stunnel-config.<stem>} must fit. */
  private static final int NAME_MAX = 255;

  private final GoDriverImage image;
  private final EfsUtilsRelease release;
  private final Optional<String> tunnelBinary;
  private final EfsUtilsDirs dirs;
  private final Map<String, String> env;
  private final Optional<String> region;

  /**
   * @param image the Go driver's image gone back to: the efs-utils line to write for, and where its
   *     tunnels are
   * @param tunnelBinary the tunnel for our own mounts when the image has it elsewhere ({@code
   *     --tunnel-binary})
   * @param dirs efs-utils' dirs here
   * @param env this process's environment: the IAM identity efs-utils would find ({@link
   *     #credentialsMethod}), and the region
   * @param region the node's region when known (a flag), for mounts that record none
   */
  public HandbackPlanner(
      GoDriverImage image,
      Optional<String> tunnelBinary,
      EfsUtilsDirs dirs,
      Map<String, String> env,
      Optional<String> region) {
    this.image = image;
    this.release = image.release();
    this.tunnelBinary = tunnelBinary;
    this.dirs = dirs;
    this.env = env;
    this.region =
        region.or(() -> Optional.ofNullable(env.get("AWS_REGION")).filter(r -> !r.isBlank()));
  }

  public HandbackPlan plan(List<Held> records, List<MountInfo> table) throws IOException {
    Map<Integer, List<MountInfo>> byPort = MountPresence.byPort(table);
    List<EfsUtilsDirs.Stored> stored = dirs.list();
    List<Handed> handed = new ArrayList<>();
    List<Idle> idle = new ArrayList<>();
    List<Refused> refused = new ArrayList<>();
    for (Held r : records) {
      List<String> points =
          byPort.getOrDefault(r.port(), List.of()).stream().map(MountInfo::mountPoint).toList();
      if (points.isEmpty()) {
        idle.add(new Idle(r));
        continue;
      }
      try {
        handed.add(handed(r, points, stored));
      } catch (UnusableStateException e) {
        refused.add(new Refused(r, points, e.getMessage()));
      }
    }
    return new HandbackPlan(image, handed, idle, refused);
  }

  private Handed handed(Held r, List<String> points, List<EfsUtilsDirs.Stored> stored)
      throws UnusableStateException {
    if (r.moving().isPresent()) {
      throw new UnusableStateException(
          "a rolling proxy upgrade is moving it ("
              + r.moving().get()
              + "); run the handback again once the move is done");
    }
    if (r.pid() <= 0) {
      throw new UnusableStateException("no proxy process runs for it (pid 0 in its record)");
    }
    if (r.key().startsWith("s3files:")) {
      throw new UnusableStateException(
          "an S3 Files volume: efs-utils mounts S3 Files with read bypass (reads straight from S3"
              + " with the mount's IAM role), which this driver's proxy does not do; handing it"
              + " over would change how its reads reach the data");
    }
    ProxyConfig config;
    try {
      config = ProxyConfig.fromMap(r.config());
    } catch (ConfigException e) {
      throw new UnusableStateException("its proxy config is not readable: " + e.getMessage());
    }
    if (!config.tls() && !release.efsProxy()) {
      throw new UnusableStateException(
          release.describe()
              + " mounts without TLS straight to the mount target: there is no tunnel to hand port "
              + r.port()
              + " to");
    }
    boolean takenOver = r.key().startsWith(TakeoverPlanner.KEY_PREFIX);
    String fs;
    String mountPoint;
    if (takenOver) {
      String stem = r.key().substring(TakeoverPlanner.KEY_PREFIX.length());
      Matcher m = STEM.matcher(stem);
      if (!m.matches()) {
        throw new UnusableStateException("its key names no efs-utils state: " + r.key());
      }
      fs = m.group(1);
      mountPoint = originalMountPoint(m, points);
    } else {
      Matcher m = KEY_FS.matcher(r.key());
      if (!m.matches()) {
        throw new UnusableStateException("its key names no file system: " + r.key());
      }
      fs = m.group(1);
      mountPoint =
          r.users().stream()
              .filter(points::contains)
              .findFirst()
              .orElseThrow(() ->
                  new UnusableStateException(
                      "none of its volumes' staging paths "
                          + r.users()
                          + " is mounted on port "
                          + r.port()
                          + " (it carries "
                          + String.join(", ", points)
                          + ")"));
    }
    String stem = fs + "." + EfsUtilsStateParser.fileSafe(mountPoint) + "." + r.port();
    if ((EfsUtilsFiles.CONFIG_PREFIX + stem)
            .getBytes(java.nio.charset.StandardCharsets.UTF_8)
            .length
        > NAME_MAX) {
      throw new UnusableStateException(
          "efs-utils' file name for mount point " + mountPoint + " is longer than 255 bytes");
    }
    for (EfsUtilsDirs.Stored s : stored) {
      if (s.port() == r.port() && !s.stem().equals(stem)) {
        throw new UnusableStateException(
            "efs-utils state "
                + s.stem()
                + " already names port "
                + r.port()
                + "; the watchdog would start two tunnels on it (remove the stale file first)");
      }
    }
    List<String> others = points.stream().filter(p -> !p.equals(mountPoint)).toList();
    String connect = config.upstreamHost() + ":" + config.upstreamPort();
    Optional<Certificate> certificate = Optional.empty();
    String region;
    if (config.tls()) {
      if (config.certFile().isEmpty() || config.keyFile().isEmpty()) {
        throw new UnusableStateException(
            "its TLS proxy presents no client certificate, which efs-utils always does");
      }
      if (config.caFile().isPresent() && !Files.isReadable(config.caFile().get())) {
        throw new UnusableStateException(
            "the CA bundle " + config.caFile().get() + " its proxy trusts is not readable here");
      }
      ClientCertificates.Request request =
          takenOver
              ? request(originalPlan(stem, stored, mountPoint))
              : request(config.certFile().get());
      Optional<String> method =
          request.iam()
              ? Optional.of(credentialsMethod(request.credentials(), env))
              : Optional.empty();
      Optional<String> profile =
          request.iam()
              ? request
                  .credentials()
                  .awsProfile()
                  .or(() -> Optional.ofNullable(env.get("AWS_PROFILE")))
                  .filter(p -> !p.isBlank())
              : Optional.empty();
      certificate =
          Optional.of(
              new Certificate(
                  request, method, profile, config.certFile().get(), config.keyFile().get()));
      region = request.region();
    } else {
      region = region(config);
    }
    return new Handed(
        r,
        stem,
        fs,
        mountPoint,
        others,
        connect,
        config.tls(),
        config.tls() && config.verifyHostname()
            ? Optional.of(config.serverName())
            : Optional.empty(),
        config.tls() ? config.caFile() : Optional.empty(),
        certificate,
        region,
        takenOver ? recordedTunnel(stem, stored, config.tls()) : ownTunnel(stem, config.tls()));
  }

  /**
   * A taken-over mount's tunnel: the command efs-utils recorded when it made the mount, and its
   * tunnel config left as it wrote it; while efs-utils' state of it is still there.
   */
  private Tunnel recordedTunnel(String stem, List<EfsUtilsDirs.Stored> stored, boolean tls)
      throws UnusableStateException {
    for (EfsUtilsDirs.Stored s : stored) {
      if (s.stem().equals(stem) && s.config().isPresent()) {
        EfsUtilsState state = EfsUtilsStateParser.parse(stem, s.state(), s.config().get());
        boolean efsProxy = state.tunnel() != EfsUtilsState.Tunnel.STUNNEL;
        return new Tunnel(
            state.command(),
            efsProxy,
            true,
            "as efs-utils recorded it when it made the mount ("
                + (efsProxy ? "efs-proxy" : "stunnel")
                + " mode), with its tunnel config as it wrote it");
      }
    }
    Tunnel own = ownTunnel(stem, tls);
    return new Tunnel(
        own.command(),
        own.efsProxy(),
        false,
        "efs-utils' state of this taken-over mount is gone; " + own.why());
  }

  /** Our own mount's tunnel: the line's own mode, with the binary mount.efs finds in the image. */
  private Tunnel ownTunnel(String stem, boolean tls) {
    List<String> cmd = new ArrayList<>();
    cmd.add(tunnelBinary.orElse(image.tunnel()));
    cmd.add(EfsUtilsFiles.recorded(EfsUtilsFiles.CONFIG_PREFIX + stem));
    if (release.efsProxy() && tls) {
      cmd.add("--tls");
    }
    if (release == EfsUtilsRelease.V3) {
      cmd.add("--no-direct-s3-read");
    }
    return new Tunnel(
        cmd,
        release.efsProxy(),
        false,
        tunnelBinary.isPresent()
            ? "given with --tunnel-binary (handback.tunnelBinary)"
            : image.why());
  }

  /** A taken-over port's mount point: the one efs-utils recorded, while it is mounted. */
  private static String originalMountPoint(Matcher stem, List<String> points)
      throws UnusableStateException {
    for (String p : points) {
      if (EfsUtilsStateParser.fileSafe(p).equals(stem.group(2))) {
        return p;
      }
    }
    throw new UnusableStateException(
        "the mount point efs-utils recorded in "
            + stem.group()
            + " is no longer mounted on the port (it carries "
            + String.join(", ", points)
            + ")");
  }

  /** A taken-over mount's identity, from efs-utils' own state (still in its state dir). */
  private TakeoverPlan originalPlan(
      String stem, List<EfsUtilsDirs.Stored> stored, String mountPoint)
      throws UnusableStateException {
    for (EfsUtilsDirs.Stored s : stored) {
      if (s.stem().equals(stem) && s.config().isPresent()) {
        EfsUtilsState state = EfsUtilsStateParser.parse(stem, s.state(), s.config().get());
        return new TakeoverPlanner(dirs).plan(state, List.of(mountPoint));
      }
    }
    throw new UnusableStateException(
        "efs-utils' state "
            + stem
            + " of this taken-over mount is gone: its access point and IAM identity are not known");
  }

  private static ClientCertificates.Request request(TakeoverPlan p) throws UnusableStateException {
    TakeoverPlan.Certificate c =
        p.certificate()
            .orElseThrow(() ->
                new UnusableStateException(
                    "efs-utils' state of this TLS mount has no certificate"));
    return new ClientCertificates.Request(
        c.fileSystemId(), c.accessPointId(), c.iam(), c.credentials(), c.region());
  }

  /** Our volume's certificate request, saved beside its certificate at issue. */
  private static ClientCertificates.Request request(Path certificate)
      throws UnusableStateException {
    Path saved = certificate.resolveSibling(IssuedCertificates.REQUEST_FILE);
    try {
      return IssuedCertificates.loadRequest(saved);
    } catch (IOException e) {
      throw new UnusableStateException(
          "what its client certificate certifies is not readable ("
              + saved
              + ": "
              + e.getMessage()
              + ")");
    }
  }

  private String region(ProxyConfig config) throws UnusableStateException {
    Matcher m = REGION_IN_NAME.matcher(config.serverName());
    if (m.matches()) {
      return m.group(1);
    }
    return region.orElseThrow(() ->
        new UnusableStateException(
            "its region is not known (server name "
                + config.serverName()
                + "); give it with --region"));
  }

  /**
   * efs-utils' {@code awsCredentialsMethod} for an IAM identity, as mount.efs records it: a named
   * profile from the credentials file, an explicit web identity, or for the default chain what
   * efs-utils' own chain finds in the same environment (the node's service account gives the Go
   * driver's pod the same variables): ECS, Pod Identity, IRSA's web identity, else the instance
   * profile.
   */
  static String credentialsMethod(IamCredentialsSource c, Map<String, String> env) {
    if (c.awsProfile().isPresent()) {
      return "credentials:" + c.awsProfile().get();
    }
    if (c.roleArn().isPresent() && c.jwtPath().isPresent()) {
      return "webidentity:" + c.roleArn().get() + "," + c.jwtPath().get();
    }
    String relative = env.getOrDefault("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "");
    if (!relative.isBlank()) {
      return "ecs:" + relative;
    }
    String full = env.getOrDefault("AWS_CONTAINER_CREDENTIALS_FULL_URI", "");
    String token = env.getOrDefault("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "");
    if (!full.isBlank() && !token.isBlank()) {
      return "podidentity:" + full + "," + token;
    }
    String arn = env.getOrDefault("AWS_ROLE_ARN", "");
    String file = env.getOrDefault("AWS_WEB_IDENTITY_TOKEN_FILE", "");
    if (!arn.isBlank() && !file.isBlank()) {
      return "webidentity:" + arn + "," + file;
    }
    return "metadata:";
  }
}

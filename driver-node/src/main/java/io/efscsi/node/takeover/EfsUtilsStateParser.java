package io.efscsi.node.takeover;

import io.efscsi.node.takeover.EfsUtilsState.Tunnel;
import io.efscsi.proxy.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads efs-utils' state for one mount: the file name stem, the JSON state file and the tunnel
 * config, as written by mount.efs 1.3x (stunnel only), 2.x and 3.x (efs-proxy, or stunnel with the
 * {@code stunnel} option). Every fact that decides where a pod's data goes is cross-checked between
 * the places efs-utils writes it (name, state, config); anything that does not agree, or that this
 * driver cannot reproduce exactly, is refused with the reason.
 */
public final class EfsUtilsStateParser {

  /** DOTALL: a mount point may hold any character, line separators (U+0085, U+2028) too. */
  private static final Pattern STEM =
      Pattern.compile("(fs-[0-9a-f]+)\\.(.+)\\.([0-9]{1,5})", Pattern.DOTALL);

  /** A port as efs-utils writes it (Integer.parseInt alone takes "+2049", "-1", "99999"). */
  private static final Pattern PORT = Pattern.compile("[1-9][0-9]{0,4}");

  private static final Pattern ACCESS_POINT = Pattern.compile("fsap-[0-9a-f]{17}");

  /**
   * The host of {@code [efs] connect}: mount.efs writes the file system's DNS name or a mount
   * target's IPv4 address there ("%s:2049"), never a name with a colon, space or bracket.
   */
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})");

  static final String CONFIG_PREFIX = "stunnel-config.";

  private EfsUtilsStateParser() {}

  /**
   * efs-utils' file-safe name of a mount point: absolute, {@code /} as {@code .}, no leading dot.
   */
  public static String fileSafe(String mountPoint) {
    String s = mountPoint.replace('/', '.');
    int i = 0;
    while (i < s.length() && s.charAt(i) == '.') {
      i++;
    }
    return s.substring(i);
  }

  /** The port at the end of a state file stem, if it has the stem's shape. */
  public static OptionalInt portOf(String stem) {
    Matcher m = STEM.matcher(stem);
    return m.matches() ? OptionalInt.of(Integer.parseInt(m.group(3))) : OptionalInt.empty();
  }

  /**
   * @param stem the state file's name
   * @param stateJson its content
   * @param config the content of {@code stunnel-config.<stem>}
   */
  public static EfsUtilsState parse(String stem, String stateJson, String config)
      throws UnusableStateException {
    Matcher m = STEM.matcher(stem);
    if (!m.matches()) {
      throw new UnusableStateException(
          "state file name " + stem + " is not <fs-id>.<mount point>.<port>");
    }
    String fs = m.group(1);
    int port = Integer.parseInt(m.group(3));
    if (port < 1 || port > 65535) {
      throw new UnusableStateException("state file name " + stem + " names port " + port);
    }
    Map<?, ?> state = object(stateJson);
    String mountPoint = text(state, "mountpoint");
    if (!fileSafe(mountPoint).equals(m.group(2))) {
      throw new UnusableStateException(
          "state file name " + stem + " does not match its mount point " + mountPoint);
    }
    Optional<String> service = optionalText(state, "service_type");
    if (service.isPresent() && !service.get().equals("elasticfilesystem")) {
      throw new UnusableStateException(
          "the mount is of service " + service.get() + "; only Amazon EFS mounts are taken over");
    }
    List<String> cmd = command(state);
    Tunnel tunnel = tunnel(cmd, service.isPresent());
    if (!cmd.get(1).endsWith("/" + CONFIG_PREFIX + stem)) {
      throw new UnusableStateException(
          "the tunnel was started with config " + cmd.get(1) + ", not " + CONFIG_PREFIX + stem);
    }
    StunnelConfig cfg = StunnelConfig.parse(config);
    if (cfg.global("fips").orElse("no").equals("yes")) {
      throw new UnusableStateException(
          "the tunnel runs in FIPS mode (fips = yes), which this driver's proxy does not offer");
    }
    if (cfg.efs("OCSPaia").orElse("no").equals("yes")) {
      throw new UnusableStateException(
          "the tunnel checks certificates with OCSP (ocsp option), which this driver does not do");
    }
    if (tunnel == Tunnel.EFS_PROXY_V2 && cfg.efs("fs_id").isPresent()) {
      tunnel = Tunnel.EFS_PROXY_V3; // efs-utils 3.x writes fs_id, region and its version
    }
    Optional<String> cfgFs = cfg.efs("fs_id");
    if (cfgFs.isPresent() && !cfgFs.get().equals(fs)) {
      throw new UnusableStateException(
          "the tunnel config names file system " + cfgFs.get() + ", the state file " + fs);
    }
    String accept = cfg.efs("accept").orElseThrow(() -> missing("[efs] accept"));
    if (!accept.equals("127.0.0.1:" + port)) {
      throw new UnusableStateException(
          "the tunnel accepts on " + accept + " but the state file names port " + port);
    }
    String connect = cfg.efs("connect").orElseThrow(() -> missing("[efs] connect"));
    int colon = connect.lastIndexOf(':');
    if (colon <= 0) {
      throw new UnusableStateException("the tunnel connects to " + connect + ", not host:port");
    }
    int upstreamPort = portNumber(connect.substring(colon + 1), "connect");
    String upstreamHost = connect.substring(0, colon);
    if (!HOST.matcher(upstreamHost).matches()) {
      throw new UnusableStateException(
          "the tunnel connects to host "
              + upstreamHost
              + ", not a DNS name or IPv4 address as mount.efs writes");
    }
    boolean tls = tunnel == Tunnel.STUNNEL || cmd.contains("--tls");
    Optional<String> cert = cfg.efs("cert");
    Optional<String> key = cfg.efs("key");
    OptionalInt verify = OptionalInt.empty();
    if (cfg.efs("verify").isPresent()) {
      String level = cfg.efs("verify").get();
      if (!level.matches("[0-4]")) {
        throw new UnusableStateException(
            "the tunnel config's verify is not a stunnel verify level (0-4): " + level);
      }
      verify = OptionalInt.of(Integer.parseInt(level));
    }
    Optional<String> ap = optionalText(state, "accessPoint");
    Optional<String> creds = optionalText(state, "awsCredentialsMethod");
    if (tls) {
      checkTls(state, fs, cert, key, ap);
    } else if (cert.isPresent() || ap.isPresent() || creds.isPresent()) {
      throw new UnusableStateException(
          "the tunnel is plain TCP but the state carries a client certificate, access point or"
              + " IAM credentials");
    }
    Optional<String> checkHost = cfg.efs("checkHost");
    if (checkHost.isPresent() && !checkHost.get().startsWith(fs + ".")) {
      throw new UnusableStateException(
          "the tunnel checks server name " + checkHost.get() + ", not one of " + fs);
    }
    return new EfsUtilsState(
        stem,
        tunnel,
        fs,
        mountPoint,
        port,
        upstreamHost,
        upstreamPort,
        tls,
        checkHost,
        verify,
        tls ? cfg.efs("CAfile") : Optional.empty(),
        cert,
        key,
        ap,
        creds,
        optionalText(state, "region").or(() -> orEmpty(cfg, "region")),
        state.get("pid") instanceof Long pid ? pid : -1,
        cmd);
  }

  private static void checkTls(
      Map<?, ?> state, String fs, Optional<String> cert, Optional<String> key, Optional<String> ap)
      throws UnusableStateException {
    if (cert.isEmpty() || key.isEmpty()) {
      throw new UnusableStateException(
          "the TLS tunnel has no client certificate (cert, key), which efs-utils always writes");
    }
    if (!cert.equals(optionalText(state, "certificate"))
        || !key.equals(optionalText(state, "privateKey"))) {
      throw new UnusableStateException(
          "the state file and the tunnel config name different client certificates or keys");
    }
    Optional<String> stateFs = optionalText(state, "fsId");
    if (stateFs.isPresent() && !stateFs.get().equals(fs)) {
      throw new UnusableStateException(
          "the state names file system " + stateFs.get() + " in a file named for " + fs);
    }
    if (ap.isPresent() && !ACCESS_POINT.matcher(ap.get()).matches()) {
      throw new UnusableStateException("access point " + ap.get() + " is not fsap-<17 hex>");
    }
  }

  private static Optional<String> orEmpty(StunnelConfig cfg, String key) {
    try {
      return cfg.efs(key);
    } catch (UnusableStateException e) {
      return Optional.empty();
    }
  }

  private static List<String> command(Map<?, ?> state) throws UnusableStateException {
    if (!(state.get("cmd") instanceof List<?> raw)) {
      throw missing("cmd");
    }
    List<String> cmd = new ArrayList<>();
    for (Object o : raw) {
      if (!(o instanceof String s)) {
        throw new UnusableStateException("the state's cmd holds a non-string: " + o);
      }
      cmd.add(s);
    }
    if (!cmd.isEmpty() && cmd.get(0).endsWith("nsenter")) {
      throw new UnusableStateException(
          "the tunnel ran in another network namespace (netns option): " + String.join(" ", cmd));
    }
    if (cmd.size() < 2) {
      throw new UnusableStateException("the state's cmd is not <tunnel> <config>: " + cmd);
    }
    return cmd;
  }

  private static Tunnel tunnel(List<String> cmd, boolean hasServiceType)
      throws UnusableStateException {
    String bin = cmd.get(0).substring(cmd.get(0).lastIndexOf('/') + 1);
    if (bin.startsWith("stunnel")) {
      return Tunnel.STUNNEL;
    }
    if (bin.equals("efs-proxy")) {
      return hasServiceType || cmd.contains("--no-direct-s3-read")
          ? Tunnel.EFS_PROXY_V3
          : Tunnel.EFS_PROXY_V2;
    }
    throw new UnusableStateException(
        "the tunnel " + cmd.get(0) + " is neither stunnel nor efs-proxy");
  }

  private static int portNumber(String v, String what) throws UnusableStateException {
    if (!PORT.matcher(v).matches() || Integer.parseInt(v) > 65535) {
      throw new UnusableStateException("the tunnel config's " + what + " is not a port: " + v);
    }
    return Integer.parseInt(v);
  }

  private static Map<?, ?> object(String json) throws UnusableStateException {
    try {
      if (Json.parse(json.strip()) instanceof Map<?, ?> m) {
        return m;
      }
    } catch (IllegalArgumentException e) {
      throw new UnusableStateException("the state file is not JSON: " + e.getMessage());
    }
    throw new UnusableStateException("the state file is not a JSON object");
  }

  private static String text(Map<?, ?> m, String field) throws UnusableStateException {
    return optionalText(m, field).orElseThrow(() -> missing(field));
  }

  private static Optional<String> optionalText(Map<?, ?> m, String field)
      throws UnusableStateException {
    Object v = m.get(field);
    if (v == null) {
      return Optional.empty();
    }
    if (!(v instanceof String s)) {
      throw new UnusableStateException("the state's " + field + " is not a string: " + v);
    }
    return Optional.of(s);
  }

  private static UnusableStateException missing(String field) {
    return new UnusableStateException("the state has no " + field);
  }
}

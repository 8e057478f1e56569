package io.efscsi.node.takeover;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Writes efs-utils state the way mount.efs does, per release line, in its exact formats (read from
 * efs-utils' sources, not copied): the file stem {@code get_mount_specific_filename}, the
 * tunnel-config lines of {@code write_stunnel_config_file} in its key order ({@code key = value},
 * globals first, {@code socket} twice), and the state JSON of {@code write_tunnel_state_file} as
 * Python's {@code json.dump} prints it ({@code ", "} and {@code ": "}, insertion order, the
 * certificate details last, {@code mount_time} a float, the watchdog's {@code unmount_count}).
 */
public final class EfsUtilsSamples {

  /** The release line that wrote the state. */
  public enum Release {
    /** efs-utils 1.35: stunnel only. */
    V1_35_STUNNEL,
    /** efs-utils 2.x, efs-proxy. */
    V2_PROXY,
    /** efs-utils 2.x with the {@code stunnel} option. */
    V2_STUNNEL,
    /** efs-utils 3.x, efs-proxy. */
    V3_PROXY,
    /** efs-utils 3.x with the {@code stunnel} option. */
    V3_STUNNEL
  }

  public static final String FS = "fs-0123456789abcdef0";
  public static final String AP = "fsap-0123456789abcdef0";
  public static final String REGION = "us-east-1";
  public static final String DNS = FS + ".efs." + REGION + ".amazonaws.com";
  public static final String POD_TARGET =
      "/var/lib/kubelet/pods/5a1c3e2f-0d4b-4c1e-9a7b-2f1e3d4c5b6a/volumes/kubernetes.io~csi/"
          + "pv-efs.data/mount";

  public Release release = Release.V3_PROXY;
  public String mountPoint = POD_TARGET;
  public int port = 20417;
  public boolean tls = true;
  public Optional<String> accessPoint = Optional.empty();
  public Optional<String> credentialsMethod = Optional.empty();
  public String connectHost = DNS;
  public String connectPort = "2049";
  public String verify = "2";
  public String caFile = "/etc/amazon/efs/efs-utils.crt";
  public long pid = 4711;

  public EfsUtilsSamples release(Release r) {
    this.release = r;
    return this;
  }

  public String stem() {
    return FS + "." + EfsUtilsStateParser.fileSafe(mountPoint) + "." + port;
  }

  private boolean proxy() {
    return release == Release.V2_PROXY || release == Release.V3_PROXY;
  }

  private boolean v3() {
    return release == Release.V3_PROXY || release == Release.V3_STUNNEL;
  }

  public String configPath() {
    return "/var/run/efs/stunnel-config." + stem();
  }

  /** The tunnel config, line by line as efs-utils serialises it. */
  public String config() {
    List<String> l = new ArrayList<>();
    l.add("fips = no");
    l.add("foreground = " + (proxy() ? "yes" : "quiet"));
    l.add("socket = l:SO_REUSEADDR=yes");
    l.add("socket = a:SO_BINDTODEVICE=lo");
    l.add("pid = /var/run/efs/" + stem() + "+/stunnel.pid");
    l.add("[efs]");
    l.add("client = yes");
    l.add("accept = 127.0.0.1:" + port);
    l.add("connect = " + connectHost + ":" + connectPort);
    l.add("sslVersion = TLSv1.2");
    l.add("renegotiation = no");
    l.add("TIMEOUTbusy = 20");
    l.add("TIMEOUTclose = 0");
    l.add("TIMEOUTidle = 70");
    l.add("delay = yes");
    if (tls) {
      l.add("verify = " + verify);
      l.add("CAfile = " + caFile);
      l.add("cert = /var/run/efs/" + stem() + "+/certificate.pem");
      l.add("key = /etc/amazon/efs/privateKey.pem");
      l.add("checkHost = " + DNS);
    }
    if (!proxy()) {
      l.add("libwrap = no");
    }
    if (proxy() && v3()) {
      l.add("retry_nfs_mount_command_timeout_sec = 15");
      // set_telemetry_config, from the efs-utils.conf the Go driver (v3.1.0 on) renders
      l.add("cloud_watch_logs = False");
      l.add("log_group_name = /aws/efs/utils");
      l.add("cloud_watch_logs_retention_days = 14");
      l.add("fs_id = " + FS);
      l.add("region = " + REGION);
      l.add("efs_utils_version = 3.2.0");
    }
    return String.join("\n", l);
  }

  /** The state JSON after the watchdog's first rewrite. */
  public String state() {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("pid", pid);
    s.put("cmd", command());
    s.put("files", List.of(configPath()));
    s.put("mount_time", 1763900000.123456);
    s.put("mountpoint", mountPoint);
    if (v3()) {
      s.put("service_type", "elasticfilesystem");
    }
    if (tls) {
      credentialsMethod.ifPresent(c -> s.put("awsCredentialsMethod", c));
      accessPoint.ifPresent(a -> s.put("accessPoint", a));
      s.put("mountStateDir", stem() + "+");
      s.put("commonName", "ip-10-0-1-23.ec2.internal");
      s.put("region", REGION);
      s.put("certificateCreationTime", "251124010203Z");
      s.put("certificate", "/var/run/efs/" + stem() + "+/certificate.pem");
      s.put("privateKey", "/etc/amazon/efs/privateKey.pem");
      s.put("fsId", FS);
    }
    s.put("unmount_count", 0L);
    return python(s);
  }

  /** The tunnel's command as mount.efs records it ({@code cmd}), on a Debian layout. */
  public List<String> command() {
    List<String> cmd = new ArrayList<>();
    if (proxy()) {
      cmd.add("/usr/bin/efs-proxy");
      cmd.add(configPath());
      if (tls) {
        cmd.add("--tls");
      }
      if (v3()) {
        cmd.add("--no-direct-s3-read");
      }
    } else {
      cmd.add("/usr/bin/stunnel");
      cmd.add(configPath());
    }
    return cmd;
  }

  /** Python's json.dumps with default separators (and ensure_ascii). */
  public static String python(Object v) {
    return io.efscsi.node.handback.PythonJson.dump(v);
  }

  public EfsUtilsState parse() throws UnusableStateException {
    return EfsUtilsStateParser.parse(stem(), state(), config());
  }
}

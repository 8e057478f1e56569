package io.efscsi.node.handback;

import io.efscsi.node.handback.HandbackPlan.Certificate;
import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.iam.CertificateFiles;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.takeover.EfsUtilsDirs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Writes what mount.efs of the target release would have left for a mount, so that efs-utils'
 * watchdog restarts the mount's tunnel on its port and renews its certificate: the tunnel config
 * {@code stunnel-config.<stem>} (efs-utils' key order, {@code key = value}), the state {@code
 * <stem>} (the JSON {@code json.dump} prints, without a {@code pid}: the state efs-utils' watchdog
 * itself leaves after a driver restart, which makes it start the tunnel), the mount's dir {@code
 * <stem>+/} (certificate, the openssl CA database the renewals use) and, when the node has none,
 * efs-utils' shared private key. Every file it replaces or adds is journalled, so that a handback
 * that does not go through is undone.
 */
public final class EfsUtilsFiles {

  static final String CONFIG_PREFIX = "stunnel-config.";
  static final String RECORDED_KEY = EfsUtilsDirs.RECORDED_CONFIG_DIR + "/privateKey.pem";
  static final String CA_COPY = "cafile.pem";

  private static final DateTimeFormatter CERT_TIME =
      DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);

  private final EfsUtilsRelease release;
  private final EfsUtilsDirs dirs;
  private final ClientCertificates issuer;
  private final Path scratch;
  private final String commonName;
  private final Clock clock;
  private final EfsUtilsConf rendered;
  private EfsUtilsConf conf;

  /**
   * @param issuer issues a certificate for efs-utils' key when ours is another
   * @param scratch a private dir of ours for that (emptied after each use)
   * @param commonName the node's host name, as efs-utils records it ({@code commonName})
   * @param clock the state's {@code mount_time}: when it is written, as mount.efs records it
   * @param rendered the efs-utils.conf the Go driver's pod renders, read when the node's config dir
   *     has none ({@link GoDriverImage#renderedConf()})
   */
  public EfsUtilsFiles(
      EfsUtilsRelease release,
      EfsUtilsDirs dirs,
      ClientCertificates issuer,
      Path scratch,
      String commonName,
      Clock clock,
      EfsUtilsConf rendered) {
    this.release = release;
    this.rendered = rendered;
    this.dirs = dirs;
    this.issuer = issuer;
    this.scratch = scratch;
    this.commonName = commonName.length() > 64 ? commonName.substring(0, 64) : commonName;
    this.clock = clock;
  }

  /** The files of one mount as written, and what they replaced. */
  public static final class Written {
    private final Map<Path, Optional<byte[]>> files = new LinkedHashMap<>();
    private final List<Path> dirsMade = new ArrayList<>();
    private String certificateSource = "";

    void file(Path p) throws IOException {
      if (!files.containsKey(p)) {
        files.put(p, Files.exists(p) ? Optional.of(Files.readAllBytes(p)) : Optional.empty());
      }
    }

    void dir(Path p) throws IOException {
      if (!Files.isDirectory(p)) {
        Files.createDirectories(
            p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-x---")));
        dirsMade.add(p);
      }
    }

    /** How the tunnel's certificate came about (the plan's words). */
    public String certificateSource() {
      return certificateSource;
    }

    /** Puts every file back as it was (removes what was added), newest first. */
    public void undo() throws IOException {
      List<Path> paths = new ArrayList<>(files.keySet());
      java.util.Collections.reverse(paths);
      for (Path p : paths) {
        Optional<byte[]> before = files.get(p);
        if (before.isPresent()) {
          Files.write(p, before.get());
        } else {
          Files.deleteIfExists(p);
        }
      }
      for (Path d : dirsMade.reversed()) {
        deleteTree(d);
      }
    }
  }

  /** Where efs-utils' shared key is here: in the dir the Go driver links as /etc/amazon/efs. */
  public Path sharedKey() {
    return configDir().resolve("privateKey.pem");
  }

  /**
   * The dir the Go driver links as /etc/amazon/efs: the legacy dir (the host's /etc/amazon/efs)
   * when it holds an efs-utils.conf, else the config dir ({@code InitConfigDir}).
   */
  Path configDir() {
    boolean legacy = Files.exists(dirs.legacyConfigDir().resolve("efs-utils.conf"));
    return legacy ? dirs.legacyConfigDir() : dirs.configDir();
  }

  /**
   * The efs-utils.conf mount.efs reads on this node: the one the Go driver's pod rendered into that
   * dir, else what it renders by default. Read once.
   */
  EfsUtilsConf conf() throws IOException {
    if (conf == null) {
      conf = EfsUtilsConf.read(configDir().resolve("efs-utils.conf"), rendered);
    }
    return conf;
  }

  /** The state dir's path of a file, as efs-utils records it. */
  static String recorded(String name) {
    return EfsUtilsDirs.RECORDED_STATE_DIR + "/" + name;
  }

  /** Where the mount's state file is here. */
  Path stateFile(Handed h) {
    return dirs.stateDir().resolve(h.stem());
  }

  /** How the tunnel's certificate will come about, in the plan's words (reads only). */
  String certificateSource(Certificate c) {
    Path shared = sharedKey();
    if (!Files.exists(shared)) {
      return "ours; our key becomes efs-utils' shared key";
    }
    try {
      return CertificateFiles.certifies(c.ourCertificate(), shared)
          ? "ours (on efs-utils' shared key)"
          : "new, for efs-utils' shared key";
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  public Written write(Handed h) throws IOException {
    Written w = new Written();
    try {
      Path state = dirs.stateDir();
      w.dir(state);
      Instant created = clock.instant();
      Optional<String> ca = Optional.empty();
      boolean writeConfig = !h.tunnel().configKept();
      if (h.tls()) {
        Path mountDir = state.resolve(h.stem() + "+");
        w.dir(mountDir);
        database(w, mountDir);
        created = certificate(w, h.certificate().orElseThrow(), mountDir);
        if (writeConfig && h.ca().isPresent()) {
          ca = Optional.of(caFile(w, h.ca().get(), mountDir));
        }
      }
      if (writeConfig) {
        Path config = state.resolve(CONFIG_PREFIX + h.stem());
        w.file(config);
        writeAtomically(config, config(h, ca));
      }
      Path file = state.resolve(h.stem());
      w.file(file);
      writeAtomically(file, state(h, created, clock.millis() / 1000.0));
      return w;
    } catch (IOException | RuntimeException e) {
      w.undo();
      throw e;
    }
  }

  /**
   * The CA bundle our proxy trusts, as the tunnel config records it: by its own path when that is
   * efs-utils' (its config dirs, as the Go driver's pod sees them); else a copy in the mount's dir,
   * as efs-utils' own bundle would not verify a server our proxy was told to trust.
   */
  private String caFile(Written w, Path ours, Path mountDir) throws IOException {
    Optional<String> recorded = dirs.recordedPath(ours);
    if (recorded.isPresent()) {
      return recorded.get();
    }
    Path copy = mountDir.resolve(CA_COPY);
    w.file(copy);
    Files.copy(ours, copy, StandardCopyOption.REPLACE_EXISTING);
    return recorded(mountDir.getFileName() + "/" + CA_COPY);
  }

  /** How the tunnel config will name the CA (the plan's words; reads only). */
  String caSource(Handed h) {
    if (!h.tls() || h.tunnel().configKept()) {
      return "as efs-utils recorded it";
    }
    return h.ca()
        .map(ca -> dirs.recordedPath(ca).orElse("a copy of " + ca + " (not one of efs-utils')"))
        .orElse(EfsUtilsDirs.DEFAULT_CA_FILE);
  }

  /** efs-utils' openssl CA database, as mount.efs lays it out (the watchdog's renewals use it). */
  private static void database(Written w, Path mountDir) throws IOException {
    Path db = mountDir.resolve("database");
    w.dir(db);
    w.dir(mountDir.resolve("certs"));
    for (String[] f :
        new String[][] {
          {"index.txt", ""},
          {"index.txt.attr", "unique_subject = no"},
          {"serial", "00"},
          {".rand", ""}
        }) {
      Path p = db.resolve(f[0]);
      if (!Files.exists(p)) {
        w.file(p);
        Files.writeString(p, f[1]);
      }
    }
  }

  /**
   * The tunnel's certificate, for efs-utils' shared key (the one its watchdog renews with): ours
   * when our proxy's key is that key, or becomes it on a node that has none yet; else a new one,
   * with the same identity, for that key.
   *
   * @return when the certificate was made
   */
  private Instant certificate(Written w, Certificate c, Path mountDir) throws IOException {
    Path target = mountDir.resolve(ClientCertificates.CERTIFICATE_FILE);
    Path shared = sharedKey();
    w.file(target);
    if (!Files.exists(shared)) {
      w.dir(shared.getParent());
      w.file(shared);
      Files.copy(c.ourKey(), shared, StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("r--------"));
      Files.copy(c.ourCertificate(), target, StandardCopyOption.REPLACE_EXISTING);
      w.certificateSource = "ours; our key is efs-utils' shared key now";
    } else if (CertificateFiles.certifies(c.ourCertificate(), shared)) {
      Files.copy(c.ourCertificate(), target, StandardCopyOption.REPLACE_EXISTING);
      w.certificateSource = "ours (on efs-utils' shared key)";
    } else {
      Path dir = scratch.resolve("handback-" + mountDir.getFileName());
      try {
        Files.createDirectories(
            dir,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.copy(
            shared,
            dir.resolve(ClientCertificates.PRIVATE_KEY_FILE),
            StandardCopyOption.REPLACE_EXISTING);
        ClientCertificates.Issued issued = issuer.issue(dir, c.request());
        Files.copy(issued.certificate(), target, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        deleteTree(dir);
      }
      w.certificateSource = "new, for efs-utils' shared key";
    }
    return CertificateFiles.issuedAt(target);
  }

  /** The tunnel config, in efs-utils' order ({@code write_stunnel_config_file}). */
  String config(Handed h, Optional<String> ca) throws IOException {
    List<String> l = new ArrayList<>();
    boolean efsProxy = h.tunnel().efsProxy();
    l.add("fips = no");
    l.add("foreground = " + (efsProxy ? "yes" : "quiet"));
    l.add("socket = l:SO_REUSEADDR=yes");
    l.add("socket = a:SO_BINDTODEVICE=lo");
    l.add("pid = " + recorded(h.stem() + "+/stunnel.pid"));
    l.add("[efs]");
    l.add("client = yes");
    l.add("accept = 127.0.0.1:" + h.port());
    l.add("connect = " + h.connect());
    l.add("sslVersion = TLSv1.2");
    l.add("renegotiation = no");
    l.add("TIMEOUTbusy = 20");
    l.add("TIMEOUTclose = 0");
    l.add("TIMEOUTidle = 70");
    l.add("delay = yes");
    if (h.tls()) {
      l.add("verify = 2");
      l.add("CAfile = " + ca.orElse(EfsUtilsDirs.DEFAULT_CA_FILE));
      l.add("cert = " + recorded(h.stem() + "+/" + ClientCertificates.CERTIFICATE_FILE));
      l.add("key = " + RECORDED_KEY);
      h.checkHost().ifPresent(name -> l.add("checkHost = " + name));
    }
    if (!efsProxy) {
      l.add("libwrap = no");
    }
    if (release == EfsUtilsRelease.V3 && efsProxy) {
      proxyLines(h, conf(), l);
      l.add("fs_id = " + h.fileSystemId());
      l.add("region = " + h.region());
      l.add("efs_utils_version = " + EfsUtilsRelease.V3_VERSION);
    }
    return String.join("\n", l);
  }

  /**
   * [proxy]'s read settings 3.x copies into an efs-proxy config ({@code set_readbypass_config}).
   */
  private static final List<String> READ_BYPASS_INTS =
      List.of(
          "read_bypass_denylist_size",
          "read_bypass_denylist_ttl_seconds",
          "s3_read_chunk_size_bytes",
          "readahead_cache_init_memory_size_mb",
          "readahead_cache_max_memory_size_mb",
          "readahead_init_window_size_bytes",
          "readahead_max_window_size_bytes",
          "readahead_cache_eviction_interval_ms",
          "readahead_cache_target_utilization_percent",
          "read_bypass_max_in_flight_s3_bytes");

  /**
   * The lines efs-utils 3.x writes into an efs-proxy config between the stunnel keys and {@code
   * fs_id}, in its order: the NFS retry timeout ([mount]), [proxy]'s logging when that section is
   * there, its read settings and an IAM mount's explicit identity ({@code set_readbypass_config}),
   * then the CloudWatch settings ({@code set_telemetry_config}), each only where the conf has it.
   */
  private static void proxyLines(Handed h, EfsUtilsConf conf, List<String> l) {
    l.add(
        "retry_nfs_mount_command_timeout_sec = "
            + conf.integer("mount", "retry_nfs_mount_command_timeout_sec")
                .filter(v -> v > 0)
                .orElse(15));
    if (conf.hasSection("proxy")) {
      l.add("proxy_logging_level = " + conf.get("proxy", "proxy_logging_level").orElse("INFO"));
      l.add(
          "proxy_logging_max_bytes = "
              + conf.integer("proxy", "proxy_logging_max_bytes").orElse(1048576));
      l.add(
          "proxy_logging_file_count = "
              + conf.integer("proxy", "proxy_logging_file_count").orElse(10));
    }
    for (String k : READ_BYPASS_INTS) {
      conf.integer("proxy", k).ifPresent(v -> l.add(k + " = " + v));
    }
    conf.bool("proxy", "readahead_cache_enabled")
        .ifPresent(b -> l.add("readahead_cache_enabled = " + (b ? "yes" : "no")));
    // an IAM mount's explicit identity (its mount options), as 3.x writes it
    h.certificate()
        .filter(c -> c.request().iam())
        .ifPresent(c -> {
          c.request().credentials().roleArn().ifPresent(a -> l.add("role_arn = " + a));
          c.request().credentials().jwtPath().ifPresent(j -> l.add("jwt_path = " + j));
          c.profile().ifPresent(p -> l.add("profile = " + p));
        });
    conf.bool("proxy", "metrics_enabled")
        .ifPresent(b -> l.add("cloud_watch_metrics = " + EfsUtilsConf.python(b)));
    conf.bool("cloudwatch-log", "enabled")
        .ifPresent(b -> l.add("cloud_watch_logs = " + EfsUtilsConf.python(b)));
    conf.get("cloudwatch-log", "log_group_name").ifPresent(g -> l.add("log_group_name = " + g));
    conf.integer("cloudwatch-log", "retention_in_days")
        .ifPresent(d -> l.add("cloud_watch_logs_retention_days = " + d));
  }

  /** The state, in mount.efs's field order ({@code write_tunnel_state_file}), without a pid. */
  String state(Handed h, Instant certificateCreated, double mountTime) {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("cmd", h.tunnel().command());
    s.put("files", List.of(recorded(CONFIG_PREFIX + h.stem())));
    s.put("mount_time", mountTime);
    s.put("mountpoint", h.mountPoint());
    if (release == EfsUtilsRelease.V3) {
      s.put("service_type", "elasticfilesystem");
    }
    if (h.certificate().isPresent()) {
      Certificate c = h.certificate().get();
      c.credentialsMethod().ifPresent(m -> s.put("awsCredentialsMethod", m));
      c.request().accessPointId().ifPresent(ap -> s.put("accessPoint", ap));
      s.put("mountStateDir", h.stem() + "+");
      s.put("commonName", commonName);
      s.put("region", h.region());
      s.put("certificateCreationTime", CERT_TIME.format(certificateCreated));
      s.put("certificate", recorded(h.stem() + "+/" + ClientCertificates.CERTIFICATE_FILE));
      s.put("privateKey", RECORDED_KEY);
      s.put("fsId", h.fileSystemId());
    }
    return PythonJson.dump(s);
  }

  private static void writeAtomically(Path file, String text) throws IOException {
    // as efs-utils does: a ~ file renamed over (the watchdog skips names without the fs- prefix)
    Path tmp = file.resolveSibling("~" + file.getFileName());
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}

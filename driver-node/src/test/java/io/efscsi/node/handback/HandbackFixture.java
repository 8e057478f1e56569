package io.efscsi.node.handback;

import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.IssuedCertificates;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.takeover.EfsUtilsSamples;
import io.efscsi.node.takeover.TakeoverPlanner;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.host.MountInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/** What the handback tests share: efs-utils' dirs, our state dir and a proxy of ours. */
abstract class HandbackFixture {

  static final int PORT = 20417;
  static final String FS = EfsUtilsSamples.FS;
  static final String DNS = EfsUtilsSamples.DNS;
  static final String STAGING =
      "/var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/0f3c/globalmount";

  @TempDir Path dir;

  final ClientCertificates certs =
      new ClientCertificates(
          "node-1",
          new ClientCertificates.ClientInfo("k8s", "test"),
          s -> StaticCredentialsProvider.create(AwsBasicCredentials.create("AKID", "secret")),
          Clock.systemUTC());

  EfsUtilsDirs dirs() {
    return new EfsUtilsDirs(
        dir.resolve("var-run-efs"), dir.resolve("var-amazon-efs"), dir.resolve("etc-amazon-efs"));
  }

  Path ours() {
    return dir.resolve("efs-csi");
  }

  /** When the files are written: the state's {@code mount_time}. */
  static final Instant NOW = Instant.parse("2026-11-28T12:00:00.250Z");

  EfsUtilsFiles files(EfsUtilsRelease r) {
    return new EfsUtilsFiles(
        r,
        dirs(),
        certs,
        ours(),
        "node-1",
        Clock.fixed(NOW, ZoneOffset.UTC),
        EfsUtilsConf.GO_DRIVER);
  }

  /** A Go driver release of each line, the newest of it. */
  static String goDriver(EfsUtilsRelease r) {
    return switch (r) {
      case V1 -> "v1.7.7";
      case V2 -> "v2.1.15";
      case V3 -> "v3.4.1";
    };
  }

  /**
   * The tunnels where {@link EfsUtilsSamples} have them (a Debian layout, as the tests' stand-ins),
   * given as {@code --tunnel-binary} would give them.
   */
  static String debianTunnel(EfsUtilsRelease r) {
    return r.efsProxy() ? "/usr/bin/efs-proxy" : "/usr/bin/stunnel";
  }

  /** A planner for the samples' layout ({@link #debianTunnel}). */
  HandbackPlanner planner(EfsUtilsRelease r, Map<String, String> env) {
    return new HandbackPlanner(
        GoDriverImage.of(goDriver(r)), Optional.of(debianTunnel(r)), dirs(), env, Optional.empty());
  }

  /** A planner for the Go driver's own image of {@code goDriver}. */
  HandbackPlanner imagePlanner(String goDriver, Map<String, String> env) {
    return new HandbackPlanner(
        GoDriverImage.of(goDriver), Optional.empty(), dirs(), env, Optional.empty());
  }

  static MountInfo mount(int id, String mountPoint, int port) {
    return new MountInfo(
        id,
        1,
        "0:" + (50 + id),
        "/",
        mountPoint,
        "rw,relatime",
        List.of(),
        "nfs4",
        "127.0.0.1:/",
        "rw,vers=4.1,rsize=1048576,wsize=1048576,soft,proto=tcp,timeo=50,retrans=2,port="
            + port
            + ",addr=127.0.0.1");
  }

  /** Our proxy for a TLS volume, as the node plugin leaves it: record, certificate, request. */
  Held tlsRecord(Optional<String> ap, boolean iam, IamCredentialsSource creds) throws Exception {
    ClientCertificates.Request request =
        new ClientCertificates.Request(FS, ap, iam, creds, EfsUtilsSamples.REGION);
    Path keyDir = ours().resolve("certs/0a1b2c3d");
    ClientCertificates.Issued issued = certs.issue(keyDir, request);
    IssuedCertificates.saveRequest(keyDir, request);
    Map<String, String> config = new HashMap<>();
    config.put(Keys.LISTEN_PORT, Integer.toString(PORT));
    config.put(Keys.UPSTREAM_HOST, DNS);
    config.put(Keys.UPSTREAM_PORT, "2049");
    config.put(Keys.TLS, "true");
    config.put(Keys.SERVER_NAME, DNS);
    config.put(Keys.VERIFY_HOSTNAME, "true");
    config.put(Keys.CERT_FILE, issued.certificate().toString());
    config.put(Keys.KEY_FILE, issued.privateKey().toString());
    config.put(Keys.BIND, "awsfile-v3");
    config.put(Keys.CONTROL_SOCKET, ours().resolve("proxies/proxy-" + PORT + ".sock").toString());
    String key =
        String.join(
            "|",
            FS,
            ap.orElse("-"),
            DNS + ":2049",
            "tls",
            DNS,
            iam ? "iam" : "noiam",
            "-",
            "verify",
            creds.awsProfile().orElse("-"),
            creds.roleArn().orElse("-"),
            creds.jwtPath().orElse("-"));
    return new Held("proxy-" + PORT, key, PORT, 4242, config, Set.of(STAGING), Optional.empty());
  }

  /**
   * A mount efs-utils made ({@code made}'s files in its state dir, its shared key beside) and our
   * takeover's proxy for it ({@code bind}: its partition binding), whose certificate is on
   * efs-utils' key.
   */
  Held takenOver(EfsUtilsSamples made, boolean iam, String bind) throws Exception {
    Path state = dirs().stateDir();
    Files.createDirectories(state.resolve(made.stem() + "+"));
    Files.writeString(state.resolve(made.stem()), made.state());
    Files.writeString(state.resolve("stunnel-config." + made.stem()), made.config());
    ClientCertificates.Request request =
        new ClientCertificates.Request(
            EfsUtilsSamples.FS,
            made.accessPoint,
            iam,
            IamCredentialsSource.DEFAULT_CHAIN,
            EfsUtilsSamples.REGION);
    ClientCertificates.Issued efsUtils = certs.issue(dir.resolve("efs-utils-made"), request);
    Files.createDirectories(dirs().configDir());
    Files.copy(efsUtils.privateKey(), dirs().configDir().resolve("privateKey.pem"));
    Files.copy(efsUtils.certificate(), state.resolve(made.stem() + "+/certificate.pem"));
    Path adopted = ours().resolve("certs/efs-utils-" + PORT);
    Files.createDirectories(adopted);
    Files.copy(efsUtils.privateKey(), adopted.resolve("privateKey.pem"));
    ClientCertificates.Issued ourCopy = certs.issue(adopted, request);
    Map<String, String> config =
        new HashMap<>(
            tlsRecord(Optional.empty(), false, IamCredentialsSource.DEFAULT_CHAIN).config());
    config.put(Keys.CERT_FILE, ourCopy.certificate().toString());
    config.put(Keys.KEY_FILE, ourCopy.privateKey().toString());
    config.put(Keys.BIND, bind);
    return new Held(
        "proxy-" + PORT,
        TakeoverPlanner.KEY_PREFIX + made.stem(),
        PORT,
        4242,
        config,
        Set.of(made.mountPoint),
        Optional.empty());
  }
}

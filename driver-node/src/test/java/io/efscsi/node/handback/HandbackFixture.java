package io.efscsi.node.handback;

import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.IssuedCertificates;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.takeover.EfsUtilsSamples;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.host.MountInfo;
import java.nio.file.Path;
import java.time.Clock;
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

  EfsUtilsFiles files(EfsUtilsRelease r) {
    return new EfsUtilsFiles(
        r,
        dirs(),
        certs,
        ours(),
        "node-1",
        r.efsProxy() ? EfsUtilsRelease.EFS_PROXY_BIN : "/usr/bin/stunnel");
  }

  HandbackPlanner planner(EfsUtilsRelease r, Map<String, String> env) {
    return new HandbackPlanner(r, dirs(), env, Optional.empty());
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
}

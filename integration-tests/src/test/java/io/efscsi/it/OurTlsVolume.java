package io.efscsi.it;

import io.efscsi.node.handback.EfsUtilsFiles;
import io.efscsi.node.handback.GoDriverImage;
import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.handback.HandbackPlanner;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.iam.IssuedCertificates;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.host.MountInfo;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One TLS volume of ours as the node plugin leaves it (its proxy's record, its client certificate
 * under our state dir, its mount on a 127.0.0.1 port), handed back by the handback's planner and
 * writer for a Go driver image: what the efs-utils ITs judge against efs-utils itself.
 */
final class OurTlsVolume {

  static final String FS = "fs-12345678";
  static final String DNS = FS + ".efs.us-east-1.amazonaws.com";

  private OurTlsVolume() {}

  /**
   * Hands back our volume of {@code FS} (with the access point, if given; no IAM, so that a renewal
   * needs no AWS credentials) mounted at {@code mountPoint} on {@code port}: plans it for {@code
   * image} and writes efs-utils' files into {@code dirs}. Our own files go under {@code ours}.
   */
  static Handed handBack(
      Path ours,
      EfsUtilsDirs dirs,
      GoDriverImage image,
      Optional<String> tunnelBinary,
      int port,
      String mountPoint,
      Optional<String> accessPoint)
      throws Exception {
    ClientCertificates certs =
        new ClientCertificates(
            "node-1",
            new ClientCertificates.ClientInfo("k8s", "it"),
            source -> software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider.create(),
            Clock.systemUTC());
    ClientCertificates.Request request =
        new ClientCertificates.Request(
            FS, accessPoint, false, IamCredentialsSource.DEFAULT_CHAIN, "us-east-1");
    Path keyDir = ours.resolve("certs/0a1b2c3d");
    ClientCertificates.Issued issued = certs.issue(keyDir, request);
    IssuedCertificates.saveRequest(keyDir, request);
    Map<String, String> config = new HashMap<>();
    config.put(Keys.LISTEN_PORT, Integer.toString(port));
    config.put(Keys.UPSTREAM_HOST, DNS);
    config.put(Keys.UPSTREAM_PORT, "2049");
    config.put(Keys.TLS, "true");
    config.put(Keys.SERVER_NAME, DNS);
    config.put(Keys.VERIFY_HOSTNAME, "true");
    config.put(Keys.CERT_FILE, issued.certificate().toString());
    config.put(Keys.KEY_FILE, issued.privateKey().toString());
    config.put(
        Keys.BIND, image.release().bind().toString().toLowerCase(Locale.ROOT).replace('_', '-'));
    String key =
        String.join(
            "|",
            FS,
            accessPoint.orElse("-"),
            DNS + ":2049",
            "tls",
            DNS,
            "noiam",
            "-",
            "verify",
            "-",
            "-",
            "-");
    Held record =
        new Held(
            "proxy-" + port,
            key,
            port,
            ProcessHandle.current().pid(),
            config,
            Set.of(mountPoint),
            Optional.empty());
    String options =
        "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,soft,noresvport,proto=tcp,port="
            + port
            + ",timeo=50,retrans=2,sec=sys,clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.1";
    MountInfo mount =
        new MountInfo(
            101,
            1,
            "0:77",
            "/",
            mountPoint,
            "rw,relatime",
            List.of(),
            "nfs4",
            "127.0.0.1:/",
            options);
    Handed h =
        new HandbackPlanner(image, tunnelBinary, dirs, Map.of(), Optional.empty())
            .plan(List.of(record), List.of(mount))
            .handed()
            .getFirst();
    new EfsUtilsFiles(
            image.release(), dirs, certs, ours, "node-1", Clock.systemUTC(), image.renderedConf())
        .write(h);
    return h;
  }
}

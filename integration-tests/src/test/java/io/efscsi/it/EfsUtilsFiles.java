package io.efscsi.it;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * efs-utils' client key and certificates, made with openssl as mount.efs makes them: one shared RSA
 * 3072 key ({@code genpkey}), and per mount a self-signed certificate with efs-utils' private
 * extensions (1.3.6.1.4.1.4843.7.1 access point, .2 IAM, .3 file system id).
 */
final class EfsUtilsFiles {

  static final String FILE_SYSTEM = "1.3.6.1.4.1.4843.7.3=ASN1:UTF8String:";
  static final String ACCESS_POINT = "1.3.6.1.4.1.4843.7.1=ASN1:UTF8String:";

  /** A stand-in for the SigV4 SEQUENCE; only its presence matters to a takeover. */
  static final String IAM = "1.3.6.1.4.1.4843.7.2=DER:30:00";

  private EfsUtilsFiles() {}

  /** The shared key, as efs-utils' {@code privateKey.pem}. */
  static void key(Path file) throws Exception {
    run(
        "openssl",
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:3072",
        "-out",
        file.toString());
  }

  /** A mount's certificate for {@code key}, valid a day, with the given extensions. */
  static void certificate(Path key, Path out, String... extensions) throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "openssl",
                "req",
                "-new",
                "-x509",
                "-key",
                key.toString(),
                "-subj",
                "/CN=node-1",
                "-days",
                "1",
                "-out",
                out.toString()));
    for (String e : extensions) {
      cmd.add("-addext");
      cmd.add(e);
    }
    run(cmd.toArray(String[]::new));
  }

  private static void run(String... cmd) throws Exception {
    NfsLab.Result r = NfsLab.exec(cmd);
    if (r.exit() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + ": " + r.output());
    }
  }

  /**
   * efs-utils' shared key and two client certificates made as efs-utils makes them (openssl, RSA
   * 3072, its private extensions): fs id only, and access point + IAM + fs id.
   */
  static void vmCertificates(Path dir) throws Exception {
    Path key = dir.resolve("efs-key.pem");
    key(key);
    String fs = FILE_SYSTEM + "fs-12345678";
    certificate(key, dir.resolve("efs-tls.crt"), fs);
    certificate(
        key, dir.resolve("efs-apiam.crt"), ACCESS_POINT + "fsap-0123456789abcdef0", IAM, fs);
  }
}

package io.efscsi.it.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The test cluster's keys and certificates, made with openssl: a CA, the API server's serving
 * certificate (127.0.0.1, localhost and the in-cluster names), an admin client certificate (the API
 * server presents it to kubelets), and the service-account signing key pair.
 */
final class Pki {

  private Pki() {}

  static void make(Path dir, String apiHost) throws IOException, InterruptedException {
    openssl(dir, "genrsa", "-out", "ca.key", "2048");
    openssl(
        dir,
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-days",
        "2",
        "-subj",
        "/CN=efs-csi-test-ca",
        "-out",
        "ca.crt");
    signed(
        dir,
        "apiserver",
        "/CN=kube-apiserver",
        "subjectAltName=IP:127.0.0.1,IP:"
            + apiHost
            + ",DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
            + "\nextendedKeyUsage=serverAuth");
    signed(dir, "admin", "/O=system:masters/CN=admin", "extendedKeyUsage=clientAuth");
    openssl(dir, "genrsa", "-out", "sa.key", "2048");
    openssl(dir, "rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub");
  }

  /** A key and a certificate signed by the CA, with the given extensions. */
  static void signed(Path dir, String name, String subject, String extensions)
      throws IOException, InterruptedException {
    Files.writeString(dir.resolve(name + ".ext"), extensions + "\n");
    openssl(dir, "genrsa", "-out", name + ".key", "2048");
    openssl(dir, "req", "-new", "-key", name + ".key", "-subj", subject, "-out", name + ".csr");
    openssl(
        dir,
        "x509",
        "-req",
        "-in",
        name + ".csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        name + ".ext",
        "-out",
        name + ".crt");
  }

  private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add("openssl");
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
    }
  }
}

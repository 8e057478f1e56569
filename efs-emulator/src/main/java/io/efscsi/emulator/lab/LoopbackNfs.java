package io.efscsi.emulator.lab;

import io.efscsi.emulator.mounttarget.Ganesha;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * nfs-ganesha on 127.0.0.1 serving {@code dir/nfs/fs} (pseudo path {@value Ganesha#PSEUDO}), a
 * self-signed certificate and key for {@value #SERVER_NAME} ({@code dir/srv.crt}, {@code
 * dir/srv.key}) and, with {@code tls}, an stunnel TLS server with it in front of ganesha: the EFS
 * side as the Go driver's stunnel client and our proxy meet it. Needs Debian's nfs-ganesha,
 * nfs-ganesha-vfs and openssl, and stunnel4 for the TLS front; a missing one fails, naming it.
 */
public final class LoopbackNfs implements AutoCloseable {

  /** The name in the lab's certificate: a file system's mount target DNS name. */
  public static final String SERVER_NAME = "fs-12345678.efs.us-east-1.amazonaws.com";

  private final Path dir;
  private final Ganesha nfs;
  private final List<Process> fronts = new ArrayList<>();
  private int tlsPort = -1;

  private LoopbackNfs(Path dir, Ganesha nfs) {
    this.dir = dir;
    this.nfs = nfs;
  }

  /** Starts ganesha in {@code dir}, makes the certificate, and the TLS front when {@code tls}. */
  public static LoopbackNfs start(Path dir, boolean tls) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    LoopbackNfs lab =
        new LoopbackNfs(dir, Ganesha.start(Files.createDirectories(dir.resolve("nfs"))));
    try {
      selfSigned(dir, "srv", SERVER_NAME);
      if (tls) {
        lab.tlsPort = freePort();
        lab.stunnelServer(lab.tlsPort, lab.cert(), lab.key());
        awaitPort(lab.tlsPort, Duration.ofSeconds(10));
      }
      return lab;
    } catch (IOException | RuntimeException | InterruptedException e) {
      lab.close();
      throw e;
    }
  }

  /** The lab's directory (certificates, configurations, logs). */
  public Path dir() {
    return dir;
  }

  /** The exported directory, the file system's root. */
  public Path export() {
    return nfs.export();
  }

  public int nfsPort() {
    return nfs.port();
  }

  /** The stunnel TLS server's port in front of ganesha; -1 when started without it. */
  public int tlsPort() {
    return tlsPort;
  }

  /** The certificate (PEM) of {@value #SERVER_NAME}, self-signed: also the CA file to trust. */
  public Path cert() {
    return dir.resolve("srv.crt");
  }

  /** Its private key (PEM, PKCS#8). */
  public Path key() {
    return dir.resolve("srv.key");
  }

  public long nfsPid() {
    return nfs.pid();
  }

  /**
   * Another stunnel TLS server on {@code port} in front of ganesha with {@code cert} and {@code
   * key} (an expired or another name's certificate); stopped with the lab.
   */
  public Process stunnelServer(int port, Path cert, Path key) throws IOException {
    Path conf = dir.resolve("stunnel-" + port + ".conf");
    Files.writeString(
        conf,
        """
        foreground = yes
        pid =
        [efs]
        accept = 127.0.0.1:%d
        connect = 127.0.0.1:%d
        cert = %s
        key = %s
        """
            .formatted(port, nfs.port(), cert, key));
    Process p;
    try {
      p =
          new ProcessBuilder("stunnel", conf.toString())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("stunnel-" + port + ".out").toFile())
              .start();
    } catch (IOException e) {
      throw new IOException("cannot start stunnel (Debian: apt-get install stunnel4): " + e, e);
    }
    fronts.add(p);
    return p;
  }

  /** A self-signed certificate and PKCS#8 key for {@code cn}, as dir/name.crt and dir/name.key. */
  public static void selfSigned(Path dir, String name, String cn)
      throws IOException, InterruptedException {
    Path out = dir.resolve(name + ".openssl.out");
    Process p =
        new ProcessBuilder(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                dir.resolve(name + ".key").toString(),
                "-out",
                dir.resolve(name + ".crt").toString(),
                "-days",
                "30",
                "-subj",
                "/CN=" + cn,
                "-addext",
                "subjectAltName=DNS:" + cn)
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    try {
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IOException("openssl failed: " + Files.readString(out));
      }
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** A loopback port free now. */
  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** Waits until something accepts on 127.0.0.1:{@code port}. */
  public static void awaitPort(int port, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try (Socket s = new Socket("127.0.0.1", port)) {
        return;
      } catch (IOException e) {
        Thread.sleep(20);
      }
    }
    throw new IllegalStateException("nothing listening on " + port + " after " + timeout);
  }

  /** Stops the TLS fronts, then ganesha. */
  @Override
  public void close() throws InterruptedException {
    for (Process p : fronts.reversed()) {
      p.destroy();
    }
    for (Process p : fronts) {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    nfs.close();
  }
}

package io.efscsi.it;

import io.efscsi.emulator.lab.LoopbackNfs;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A real NFS stack on loopback: the project's one loopback NFS lab ({@link LoopbackNfs}:
 * nfs-ganesha exporting a directory, an stunnel TLS server in front of it standing in for the EFS
 * side), libnfs as the NFS client, and our packaged proxy between them. Needs the Debian packages
 * nfs-ganesha, nfs-ganesha-vfs, stunnel4 and libnfs-utils, which scripts/test installs; a missing
 * one fails the suite, it never skips it.
 */
final class NfsLab implements AutoCloseable {

  static final String SERVER_NAME = LoopbackNfs.SERVER_NAME;

  final Path dir;
  final Path export;
  final int nfsPort;
  final int tlsPort;
  private final LoopbackNfs nfs;
  private final List<Process> processes = new ArrayList<>();

  NfsLab(Path dir, int fileMiB) throws Exception {
    for (String tool : List.of("stunnel", "nfs-cp", "nfs-ls", "openssl", "keytool")) {
      if (which(tool) == null) {
        HostCleanup.deleteTree(
            dir); // the caller's fresh temp dir: a lab that cannot start leaves none
        throw new IllegalStateException(
            tool + " is not installed: run scripts/test, which installs the NFS test stack");
      }
    }
    this.dir = dir;
    // the project's one loopback NFS lab (benchmarks/nfslab.py runs it through `efs-csi lab`, the
    // emulator's mount target and the demo the same ganesha): ganesha, srv.crt/srv.key for
    // SERVER_NAME, an stunnel TLS server in front
    this.nfs = LoopbackNfs.start(dir, true);
    this.export = nfs.export();
    this.nfsPort = nfs.nfsPort();
    this.tlsPort = nfs.tlsPort();
    byte[] block = new byte[1 << 20];
    Random random = new Random(2026);
    try (var out = Files.newOutputStream(export.resolve("big.bin"))) {
      for (int i = 0; i < fileMiB; i++) {
        random.nextBytes(block);
        out.write(block);
      }
    }
  }

  /** A self-signed certificate and PKCS#8 key for {@code cn}, as name.crt and name.key. */
  void selfSigned(String name, String cn) throws Exception {
    LoopbackNfs.selfSigned(dir, name, cn);
  }

  /** A self-signed certificate and PKCS#8 key for {@code cn}, as dir/name.crt and dir/name.key. */
  static void selfSigned(Path dir, String name, String cn) throws Exception {
    LoopbackNfs.selfSigned(dir, name, cn);
  }

  /**
   * A server certificate for {@code cn} that expired yesterday, issued by a valid test CA: name.crt
   * (the leaf), name.key, name-ca.crt. keytool can back-date a certificate; openssl 3.0 cannot.
   */
  void expired(String name, String cn) throws Exception {
    String ks = dir.resolve(name + ".p12").toString();
    String leafKs = dir.resolve(name + "-leaf.p12").toString();
    String csr = dir.resolve(name + ".csr").toString();
    String[] store = {"-keystore", ks, "-storetype", "PKCS12", "-storepass", "changeit"};
    check(
        run(
            concat(
                new String[] {
                  "keytool",
                  "-genkeypair",
                  "-alias",
                  "ca",
                  "-keyalg",
                  "RSA",
                  "-keysize",
                  "2048",
                  "-dname",
                  "CN=efs-csi test CA",
                  "-ext",
                  "bc:c",
                  "-validity",
                  "30"
                },
                store)));
    check(
        run(
            concat(
                new String[] {
                  "keytool",
                  "-genkeypair",
                  "-alias",
                  "leaf",
                  "-keyalg",
                  "RSA",
                  "-keysize",
                  "2048",
                  "-dname",
                  "CN=" + cn,
                  "-validity",
                  "30"
                },
                store)));
    check(run(concat(new String[] {"keytool", "-certreq", "-alias", "leaf", "-file", csr}, store)));
    check(
        run(
            concat(
                new String[] {
                  "keytool",
                  "-gencert",
                  "-alias",
                  "ca",
                  "-infile",
                  csr,
                  "-rfc",
                  "-outfile",
                  dir.resolve(name + ".crt").toString(),
                  "-startdate",
                  "-3d",
                  "-validity",
                  "1",
                  "-ext",
                  "SAN=dns:" + cn
                },
                store)));
    check(
        run(
            concat(
                new String[] {
                  "keytool",
                  "-exportcert",
                  "-alias",
                  "ca",
                  "-rfc",
                  "-file",
                  dir.resolve(name + "-ca.crt").toString()
                },
                store)));
    check(
        run(
            "keytool",
            "-importkeystore",
            "-srckeystore",
            ks,
            "-srcstoretype",
            "PKCS12",
            "-srcstorepass",
            "changeit",
            "-srcalias",
            "leaf",
            "-destkeystore",
            leafKs,
            "-deststoretype",
            "PKCS12",
            "-deststorepass",
            "changeit"));
    check(
        run(
            "openssl",
            "pkcs12",
            "-in",
            leafKs,
            "-passin",
            "pass:changeit",
            "-nocerts",
            "-nodes",
            "-out",
            dir.resolve(name + ".key").toString()));
  }

  private static String[] concat(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static void check(Result r) {
    if (r.exit() != 0) {
      throw new IllegalStateException(r.output());
    }
  }

  Process stunnelServer(int port, Path cert, Path key) throws IOException {
    return nfs.stunnelServer(port, cert, key);
  }

  String url(int port, String name) {
    return "nfs://127.0.0.1/export/" + name + "?version=4&nfsport=" + port;
  }

  /** Starts the packaged proxy with the given config keys on a free port. */
  Proxy proxy(Map<String, String> overrides) throws Exception {
    int port = freePort();
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("listen.port", Integer.toString(port));
    conf.put("upstream.host", "127.0.0.1");
    conf.put("upstream.port", Integer.toString(tlsPort));
    conf.put("tls", "true");
    conf.put("tls.server-name", SERVER_NAME);
    conf.put("tls.ca-file", dir.resolve("srv.crt").toString());
    conf.put("control.socket", dir.resolve("proxy-" + port + ".sock").toString());
    conf.putAll(overrides);
    return startProxy(port, conf);
  }

  Proxy startProxy(int port, Map<String, String> conf) throws Exception {
    Path file = dir.resolve("proxy-" + port + ".conf");
    StringBuilder sb = new StringBuilder();
    conf.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
    Files.writeString(file, sb.toString());
    Path log = dir.resolve("proxy-" + port + ".log");
    ProcessBuilder pb =
        new ProcessBuilder(
                PackagedDriver.distDir().resolve("bin/efs-csi").toString(),
                "proxy",
                "--config",
                file.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Process p = pb.start();
    processes.add(p);
    Proxy proxy = new Proxy(p, port, log, conf.get("control.socket"));
    return proxy;
  }

  record Result(int exit, String output) {}

  Result run(String... cmd) throws IOException, InterruptedException {
    return exec(cmd);
  }

  static Result exec(String... cmd) throws IOException, InterruptedException {
    return exec(120, cmd);
  }

  /** Runs cmd with stdout and stderr together; exit -1 when it took over timeoutSeconds. */
  static Result exec(long timeoutSeconds, String... cmd) throws IOException, InterruptedException {
    Path out = Files.createTempFile("efs-csi-it-exec", ".log");
    try {
      Process p =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, Files.readString(out) + "\n(timed out)");
      }
      return new Result(p.exitValue(), Files.readString(out));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** Reads the big file through {@code port} with libnfs and checks every byte. */
  Duration readExact(int port) throws Exception {
    Path out = dir.resolve("out-" + port + "-" + System.nanoTime() + ".bin");
    long t0 = System.nanoTime();
    Result r = run("nfs-cp", url(port, "big.bin"), out.toString());
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    try {
      if (r.exit() != 0) {
        throw new AssertionError("nfs-cp through port " + port + " failed: " + r.output());
      }
      long mismatch = Files.mismatch(out, export.resolve("big.bin"));
      if (mismatch != -1) {
        throw new AssertionError(
            "bytes read through port " + port + " differ at offset " + mismatch);
      }
      return took;
    } finally {
      Files.deleteIfExists(out);
    }
  }

  static int freePort() throws IOException {
    return LoopbackNfs.freePort();
  }

  static void awaitPort(int port, Duration timeout) throws InterruptedException {
    LoopbackNfs.awaitPort(port, timeout);
  }

  static String which(String tool) {
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      for (String base : List.of(d, "/usr/sbin", "/sbin")) {
        Path p = Path.of(base, tool);
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    return null;
  }

  @Override
  public void close() {
    for (Process p : processes.reversed()) {
      p.destroy();
    }
    try {
      for (Process p : processes) {
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      }
      nfs.close(); // the TLS fronts, then ganesha
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops everything and removes the lab's directory. */
  void closeAndDelete() throws IOException {
    close();
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }

  /** One command on a proxy's control socket; its one-line answer. */
  static String control(String socket, String command) throws IOException {
    try (var ch = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      ch.connect(java.net.UnixDomainSocketAddress.of(socket));
      ch.write(java.nio.ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.UTF_8)));
      var in =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(
                  java.nio.channels.Channels.newInputStream(ch), StandardCharsets.UTF_8));
      return in.readLine();
    }
  }

  /** A running proxy process. */
  record Proxy(Process process, int port, Path log, String controlSocket) {

    void awaitListening() throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          throw new AssertionError("proxy exited " + process.exitValue() + ":\n" + logText());
        }
        try (Socket s = new Socket("127.0.0.1", port)) {
          return;
        } catch (IOException e) {
          Thread.sleep(20);
        }
      }
      throw new AssertionError("proxy not listening:\n" + logText());
    }

    String logText() {
      try {
        return Files.readString(log);
      } catch (IOException e) {
        return "(no log)";
      }
    }

    /** One command on the control socket. */
    String control(String command) throws IOException {
      return NfsLab.control(controlSocket, command);
    }

    long metric(String name) throws IOException {
      String status = control("status");
      var m = java.util.regex.Pattern.compile("\"" + name + "\":(\\d+)").matcher(status);
      if (!m.find()) {
        throw new AssertionError("no " + name + " in " + status);
      }
      return Long.parseLong(m.group(1));
    }

    int stop() throws InterruptedException {
      process.destroy();
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("proxy did not stop on SIGTERM");
      }
      return process.exitValue();
    }
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Dockerfile, built with a real Docker engine from the packaged distribution, and the image
 * run: the launcher, the AOT training run (driver, controller and EFS emulator in one), the host
 * tools the node plugin calls, and the proxy with BoringSSL, epoll and its AOT cache made in the
 * image. No image registry is reachable here, so the two base images (Debian bookworm, a JDK 25)
 * are made on this machine by {@code container/base-images.sh} and passed as the Dockerfile's build
 * arguments. Needs {@code DOCKER_HOST} (scripts/test starts an engine); without one the test fails.
 * The image is built for this machine's architecture (TARGETARCH), with the OCI labels of the
 * distribution's version, commit and build date as build arguments.
 */
class ContainerImageIT {

  static final String IMAGE = "efs-csi-test/efs-csi:it";
  static final String DEBIAN = "efs-csi-test/debian:bookworm";
  static final String JDK = "efs-csi-test/jdk:25";
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final Path WORK = Path.of("target/container-it").toAbsolutePath();

  private final List<String> containers = new ArrayList<>();

  static NfsLab.Result run(long timeoutSeconds, String... command) throws Exception {
    NfsLab.Result r = NfsLab.exec(timeoutSeconds, command);
    if (r.exit() == -1) {
      throw new AssertionError(
          String.join(" ", command) + " took over " + timeoutSeconds + " s:\n" + r.output());
    }
    return r;
  }

  static String ok(long timeoutSeconds, String... command) throws Exception {
    NfsLab.Result r = run(timeoutSeconds, command);
    assertEquals(0, r.exit(), String.join(" ", command) + " failed:\n" + r.output());
    return r.output();
  }

  @BeforeAll
  static void buildImage() throws Exception {
    NfsLab.Result engine = run(60, "docker", "info");
    assertEquals(
        0,
        engine.exit(),
        "no Docker engine at DOCKER_HOST="
            + System.getenv("DOCKER_HOST")
            + " (scripts/test starts one):\n"
            + engine.output());
    Path script = Files.createDirectories(WORK).resolve("base-images.sh");
    try (InputStream in = ContainerImageIT.class.getResourceAsStream("/container/base-images.sh")) {
      Files.copy(in, script, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    ok(900, "bash", script.toString(), DEBIAN, JDK, WORK.resolve("base").toString());
    assertTrue(
        Files.isDirectory(ROOT.resolve("dist/target/efs-csi/lib")),
        "no packaged distribution: run 'mvnw package' first");
    DIST =
        versionOf(ok(120, ROOT.resolve("dist/target/efs-csi/bin/efs-csi").toString(), "version"));
    ok(
        900,
        "docker",
        "build",
        "-t",
        IMAGE,
        "--build-arg",
        "JDK_IMAGE=" + JDK,
        "--build-arg",
        "BASE_IMAGE=" + DEBIAN,
        "--build-arg",
        "TARGETARCH=" + ARCH,
        "--build-arg",
        "VERSION=" + DIST.get("driverVersion"),
        "--build-arg",
        "REVISION=" + DIST.get("gitCommit"),
        "--build-arg",
        "CREATED=" + DIST.get("buildDate"),
        ROOT.toString());
  }

  /** This machine's architecture as Docker names it: the image is built for it (no emulation). */
  static final String ARCH = System.getProperty("os.arch").equals("aarch64") ? "arm64" : "amd64";

  /** What the packaged distribution's {@code efs-csi version} prints. */
  static Map<String, String> DIST;

  /** The string fields of {@code efs-csi version}'s JSON. */
  static Map<String, String> versionOf(String json) {
    Map<String, String> out = new TreeMap<>();
    Matcher m = Pattern.compile("\"(\\w+)\": \"([^\"]*)\"").matcher(json);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  @AfterAll
  static void removeImage() throws Exception {
    run(120, "docker", "image", "rm", "-f", IMAGE);
  }

  @org.junit.jupiter.api.AfterEach
  void removeContainers() throws Exception {
    for (String c : containers) {
      run(60, "docker", "rm", "-f", c);
    }
  }

  @Test
  void theLauncherIsTheEntrypointAndTellsItsVersion() throws Exception {
    String out = ok(120, "docker", "run", "--rm", IMAGE, "version");
    Map<String, String> image = versionOf(out);
    assertEquals(System.getProperty("efscsi.version"), image.get("driverVersion"), out);
    assertEquals(DIST.get("gitCommit"), image.get("gitCommit"), out);
    assertEquals(DIST.get("buildDate"), image.get("buildDate"), out);
    assertEquals("linux/" + ARCH, image.get("platform"), out);
    assertTrue(image.get("javaVersion").startsWith("25"), out);
  }

  /** The OCI labels say which version, commit and build the image carries, and its licence. */
  @Test
  void theImageCarriesTheOciLabelsOfItsBuild() throws Exception {
    String json =
        ok(60, "docker", "image", "inspect", "--format", "{{json .Config.Labels}}", IMAGE);
    @SuppressWarnings("unchecked")
    Map<String, String> labels = HelmChartTest.YAML.unmarshal(json, Map.class);
    String p = "org.opencontainers.image.";
    assertEquals(System.getProperty("efscsi.version"), labels.get(p + "version"), json);
    assertEquals(DIST.get("gitCommit"), labels.get(p + "revision"), json);
    assertEquals(DIST.get("buildDate"), labels.get(p + "created"), json);
    assertTrue(Instant.parse(labels.get(p + "created")).isBefore(Instant.now()), json);
    assertEquals("Apache-2.0", labels.get(p + "licenses"), json);
    assertEquals("efs-csi-java", labels.get(p + "title"), json);
    assertEquals("https://github.com/efs-csi-java/efs-csi-java", labels.get(p + "source"), json);
  }

  /**
   * The image keeps only its own architecture's Netty natives (the distribution has x86_64 and
   * aarch_64), and its licence.
   */
  @Test
  void theImageHasOnlyItsArchitecturesNativesAndTheLicence() throws Exception {
    String own = ARCH.equals("amd64") ? "x86_64" : "aarch_64";
    String listing =
        shell(
            "cd /opt/efs-csi && ls lib/proxy/native lib/*.jar lib/proxy/*.jar"
                + " && grep -c 'Apache License' LICENSE");
    for (String lib : List.of("libnetty_transport_native_epoll_", "libnetty_tcnative_linux_")) {
      assertTrue(listing.contains(lib + own + ".so"), listing);
    }
    assertTrue(!listing.contains(ARCH.equals("amd64") ? "aarch_64" : "x86_64"), listing);
    assertTrue(listing.contains("netty-transport-native-epoll-"), listing);
  }

  /**
   * The controller as the chart runs it when it deletes no access point root directories: as
   * 65532:65532, not root. It starts, its CSI socket appears and /healthz answers.
   */
  @Test
  void theControllerStartsAndServesAsNonRoot() throws Exception {
    String id =
        ok(
                60,
                "docker",
                "run",
                "-d",
                "--user",
                "65532:65532",
                "--network",
                "none",
                "-e",
                "AWS_REGION=us-east-1",
                IMAGE,
                "controller",
                "--endpoint",
                "unix:///tmp/csi/csi.sock",
                "--http-endpoint",
                "127.0.0.1:9909")
            .strip();
    containers.add(id);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    NfsLab.Result health;
    do {
      Thread.sleep(250);
      health =
          run(
              30,
              "docker",
              "exec",
              id,
              "bash",
              "-c",
              "test -S /tmp/csi/csi.sock && exec 3<>/dev/tcp/127.0.0.1/9909"
                  + " && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3");
      // ready once its AWS clients are built, which may come just after the socket: asked again
    } while ((health.exit() != 0 || !health.output().startsWith("HTTP/1.1 200"))
        && System.nanoTime() < deadline);
    String logs = run(30, "docker", "logs", id).output();
    assertEquals(0, health.exit(), health.output() + "\n" + logs);
    assertTrue(health.output().startsWith("HTTP/1.1 200"), health.output() + "\n" + logs);
    String status = ok(30, "docker", "exec", id, "cat", "/proc/1/status");
    assertTrue(status.matches("(?s).*\\nUid:\\s+65532\\s+65532\\s+65532\\s+65532\\n.*"), status);
    assertTrue(status.matches("(?s).*\\nGid:\\s+65532\\s+65532\\s+65532\\s+65532\\n.*"), status);
  }

  @Test
  void theDriverAndTheControllerRunAgainstTheEmulatorInTheImage() throws Exception {
    // the controller's AOT training run: the packaged controller as its own process, provisioning
    // through its SDK client against the emulator (the demo needs root, mounts and nfs-ganesha)
    String out =
        ok(300, "docker", "run", "--rm", IMAGE, "aot-training", "controller", "/tmp/check.conf");
    assertTrue(!out.contains("Exception"), out);
  }

  @Test
  void theNodePluginsToolsAndBothAotCachesAreInTheImage() throws Exception {
    shell(
        "for c in mount mount.nfs4 umount realpath rm stat sh; do command -v $c || exit 1; done"
            + " && test -s /opt/efs-csi/lib/efs-csi-node.aot -a -s /opt/efs-csi/lib/efs-csi-controller.aot"
            + " && test -s /opt/efs-csi/lib/proxy/proxy.aot");
  }

  /** The output of a shell script run in a container of the image, which must succeed. */
  private static String shell(String script) throws Exception {
    return ok(120, "docker", "run", "--rm", "--entrypoint", "sh", IMAGE, "-c", script);
  }

  /** A proxy in the image, on the host's network: TLS from BoringSSL, buffers from malloc. */
  @Test
  void theProxyRunsInTheImageWithBoringSslAndRelaysRecords() throws Exception {
    Path state = Files.createTempDirectory(Files.createDirectories(WORK), "proxy");
    Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwxrwxrwx"));
    try (ServerSocket echo = new ServerSocket(0, 4, InetAddress.getLoopbackAddress())) {
      Thread.ofVirtual().start(() -> echo(echo));
      int tlsPort = NfsLab.freePort();
      int plainPort = NfsLab.freePort();
      Files.writeString(
          state.resolve("tls.conf"),
          "listen.port=%d\nupstream.host=127.0.0.1\nupstream.port=%d\ntls=true\n"
                  .formatted(tlsPort, echo.getLocalPort())
              + "tls.server-name=fs-12345678.efs.us-east-1.amazonaws.com\n"
              + "control.socket=/state/tls.sock\n");
      Files.writeString(
          state.resolve("plain.conf"),
          "listen.port=%d\nupstream.host=127.0.0.1\nupstream.port=%d\ntls=false\nbind.protocol=none\n"
              .formatted(plainPort, echo.getLocalPort()));
      for (String conf : List.of("tls", "plain")) {
        String id =
            ok(
                    120,
                    "docker",
                    "run",
                    "-d",
                    "--network",
                    "host",
                    "-v",
                    state + ":/state",
                    IMAGE,
                    "proxy",
                    "--config",
                    "/state/" + conf + ".conf")
                .strip();
        containers.add(id);
      }
      String status = control(state.resolve("tls.sock"), "status");
      assertTrue(status.contains("\"tls\":\"BoringSSL"), status);
      assertTrue(status.contains("\"direct_buffers\":\"malloc\""), status);

      byte[] record = new byte[64 * 1024 + 4];
      new Random(7).nextBytes(record);
      int mark = 0x8000_0000 | (record.length - 4);
      ByteBuffer.wrap(record).putInt(mark);
      try (Socket s = connect(plainPort)) {
        s.getOutputStream().write(record);
        byte[] back = s.getInputStream().readNBytes(record.length);
        assertArrayEquals(record, back, "the record came back whole through the proxy");
      }
    }
  }

  private static void echo(ServerSocket server) {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread.ofVirtual()
            .start(() -> {
              try (s;
                  InputStream in = s.getInputStream();
                  OutputStream out = s.getOutputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // the peer went away
              }
            });
      } catch (IOException e) {
        return;
      }
    }
  }

  private static Socket connect(int port) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return new Socket(InetAddress.getLoopbackAddress(), port);
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  /** The proxy's answer to a control command, once its control socket is there. */
  private static String control(Path socket, String command) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!Files.exists(socket)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no control socket " + socket);
      }
      Thread.sleep(100);
    }
    return NfsLab.control(socket.toString(), command);
  }
}

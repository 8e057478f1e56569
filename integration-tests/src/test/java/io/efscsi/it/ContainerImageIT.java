package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Image;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.startupcheck.OneShotStartupCheckStrategy;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The Dockerfile, built with a real Docker engine from the packaged distribution, and the image
 * run: the launcher, the AOT training run (driver, controller and EFS emulator in one), the host
 * tools the node plugin calls, and the proxy with BoringSSL, epoll and its AOT cache made in the
 * image. No image registry is reachable here, so the two base images (Debian bookworm, a JDK 25)
 * are made on this machine by {@code container/base-images.sh} and passed as the Dockerfile's build
 * arguments. Needs {@code DOCKER_HOST} (scripts/test starts an engine); without one the test fails.
 * The image is built for this machine's architecture (TARGETARCH), with the OCI labels of the
 * distribution's version, commit and build date as build arguments.
 *
 * <p>The image is built with the {@code docker} CLI (its build context honours .dockerignore); the
 * containers run from it are Testcontainers {@link GenericContainer}s on the same engine (Ryuk off:
 * its image cannot be pulled here; the image is never pulled either), each removed when its test
 * ends, with wait strategies for readiness and their logs in every failure.
 */
@ExtendWith(BuiltImages.class)
class ContainerImageIT {

  static final String IMAGE = "efs-csi-test/efs-csi:it";
  static final String DEBIAN = "efs-csi-test/debian:bookworm";
  static final String JDK = "efs-csi-test/jdk:25";
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final Path WORK = Path.of("target/container-it").toAbsolutePath();

  /** The engine's images before the first build: what else is dangling after it is the build's. */
  private static Set<String> imagesBefore;

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

  /**
   * The image, built once per test JVM for this class and the cluster suites ({@link BuiltImages}).
   */
  @BeforeAll
  static void buildImage() throws Exception {
    BuiltImages.project();
  }

  /** Builds the image from the Dockerfile (through {@link BuiltImages#project}). */
  static void build() throws Exception {
    DockerClient docker = docker();
    if (imagesBefore == null) {
      imagesBefore = imageIds(docker);
    }
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

  /**
   * The Testcontainers client of the engine at {@code DOCKER_HOST}, the one {@code docker} builds
   * with (never another, such as /var/run/docker.sock); fails when none answers there.
   */
  static DockerClient docker() {
    String host = System.getenv("DOCKER_HOST");
    assertTrue(host != null, "no DOCKER_HOST (scripts/test starts an engine and sets it)");
    DockerClient client;
    try {
      client = DockerClientFactory.instance().client();
    } catch (IllegalStateException e) {
      throw new AssertionError(
          "no Docker engine at DOCKER_HOST=" + host + " (scripts/test starts one)", e);
    }
    assertEquals(
        URI.create(host), DockerClientFactory.instance().getTransportConfig().getDockerHost());
    return client;
  }

  private static Set<String> imageIds(DockerClient docker) {
    Set<String> ids = new HashSet<>();
    for (Image i : docker.listImagesCmd().withShowAll(true).exec()) {
      ids.add(i.getId());
    }
    return ids;
  }

  /**
   * Removes the image, and the images of the Dockerfile's other stages the build left untagged (the
   * engine keeps them as build cache, one more set for every build); when the run ends ({@link
   * BuiltImages}).
   */
  static void removeImage() {
    DockerClient docker = docker();
    try {
      docker.removeImageCmd(IMAGE).withForce(true).exec();
    } catch (NotFoundException e) {
      // the build failed
    }
    for (Image i : docker.listImagesCmd().withDanglingFilter(true).exec()) {
      if (imagesBefore != null && !imagesBefore.contains(i.getId())) {
        try {
          docker.removeImageCmd(i.getId()).exec();
        } catch (DockerException e) {
          // in use by another build or container of this engine: its owner removes it
        }
      }
    }
  }

  /**
   * A container of the image (built here, never pulled), removed when closed, that keeps its logs
   * when it stops: a failure to start carries its command and its logs.
   */
  static final class ImageContainer extends GenericContainer<ImageContainer> {

    private String logs = "(no logs: the container was not created)";

    ImageContainer(String... command) {
      super(DockerImageName.parse(IMAGE));
      withImagePullPolicy(image -> false);
      withCommand(command);
    }

    /** Runs it to its exit, which must be 0 within {@code timeout}; returns its output. */
    String output(Duration timeout) {
      withStartupCheckStrategy(new OneShotStartupCheckStrategy().withTimeout(timeout));
      try (ImageContainer c = this) {
        return c.started().getLogs();
      }
    }

    ImageContainer started() {
      try {
        start();
      } catch (RuntimeException e) {
        throw new AssertionError(
            String.join(" ", getCommandParts()) + " in " + IMAGE + " failed:\n" + logs, e);
      }
      return this;
    }

    @Override
    protected void containerIsStopping(InspectContainerResponse containerInfo) {
      try {
        logs = getLogs();
      } catch (RuntimeException e) {
        logs = "(no logs: " + e + ")";
      }
    }
  }

  @Test
  void theLauncherIsTheEntrypointAndTellsItsVersion() throws Exception {
    String out = new ImageContainer("version").output(Duration.ofSeconds(120));
    Map<String, String> image = versionOf(out);
    assertEquals(System.getProperty("efscsi.version"), image.get("driverVersion"), out);
    assertEquals(DIST.get("gitCommit"), image.get("gitCommit"), out);
    assertEquals(DIST.get("buildDate"), image.get("buildDate"), out);
    assertEquals("linux/" + ARCH, image.get("platform"), out);
    assertTrue(image.get("javaVersion").startsWith("25"), out);
  }

  /**
   * The OCI labels say which version, commit and build the image carries, and its licence, as
   * install.md's {@code docker image inspect} line prints them.
   */
  @Test
  void theImageCarriesTheOciLabelsOfItsBuild() throws Exception {
    String inspect =
        DocCommands.inline("install.md", "docker image inspect").replace("<image>", IMAGE);
    var r = DocCommands.run(inspect, Path.of("/dev/null"), Map.of());
    assertEquals(0, r.exit(), inspect + " -> " + r);
    String json = r.output();
    @SuppressWarnings("unchecked")
    Map<String, String> labels =
        new com.fasterxml.jackson.databind.ObjectMapper().readValue(json, Map.class);
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
    // ready once its CSI socket is there and /healthz answers, which may come just after the
    // socket (once its AWS clients are built); asked from inside, as it has no network
    String health =
        "bash -c 'test -S /tmp/csi/csi.sock && exec 3<>/dev/tcp/127.0.0.1/9909"
            + " && printf \"GET /healthz HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3'";
    try (ImageContainer controller =
        new ImageContainer(
                "controller",
                "--endpoint",
                "unix:///tmp/csi/csi.sock",
                "--http-endpoint",
                "127.0.0.1:9909")
            .withCreateContainerCmdModifier(cmd -> cmd.withUser("65532:65532"))
            .withNetworkMode("none")
            .withEnv("AWS_REGION", "us-east-1")
            .waitingFor(
                Wait.forSuccessfulCommand(health + " | head -1 | grep -q '^HTTP/1.1 200'")
                    .withStartupTimeout(Duration.ofSeconds(60)))
            .started()) {
      var answer = controller.execInContainer("sh", "-c", health);
      String logs = controller.getLogs();
      assertEquals(0, answer.getExitCode(), answer + "\n" + logs);
      assertTrue(answer.getStdout().startsWith("HTTP/1.1 200"), answer + "\n" + logs);
      var proc = controller.execInContainer("cat", "/proc/1/status");
      assertEquals(0, proc.getExitCode(), proc.toString());
      String status = proc.getStdout();
      assertTrue(status.matches("(?s).*\\nUid:\\s+65532\\s+65532\\s+65532\\s+65532\\n.*"), status);
      assertTrue(status.matches("(?s).*\\nGid:\\s+65532\\s+65532\\s+65532\\s+65532\\n.*"), status);
    }
  }

  @Test
  void theDriverAndTheControllerRunAgainstTheEmulatorInTheImage() throws Exception {
    // the controller's AOT training run: the packaged controller as its own process, provisioning
    // through its SDK client against the emulator (the demo needs root, mounts and nfs-ganesha)
    String out =
        new ImageContainer("aot-training", "controller", "/tmp/check.conf")
            .output(Duration.ofSeconds(300));
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
    return new ImageContainer("-c", script)
        .withCreateContainerCmdModifier(cmd -> cmd.withEntrypoint("sh"))
        .output(Duration.ofSeconds(120));
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
      // each ready once it listens: the TLS one's control socket is there, the plain one's port
      try (ImageContainer tls = proxy(state, "tls", "test -S /state/tls.sock");
          ImageContainer plain =
              proxy(state, "plain", "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + plainPort + "'")) {
        String status = NfsLab.control(state.resolve("tls.sock").toString(), "status");
        assertTrue(status.contains("\"tls\":\"BoringSSL"), status + "\n" + tls.getLogs());
        assertTrue(status.contains("\"direct_buffers\":\"malloc\""), status + "\n" + tls.getLogs());

        byte[] record = new byte[64 * 1024 + 4];
        new Random(7).nextBytes(record);
        int mark = 0x8000_0000 | (record.length - 4);
        ByteBuffer.wrap(record).putInt(mark);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), plainPort)) {
          s.getOutputStream().write(record);
          byte[] back = s.getInputStream().readNBytes(record.length);
          assertArrayEquals(
              record, back, "the record came back whole through the proxy\n" + plain.getLogs());
        }
      }
    }
  }

  /** A proxy of the image with {@code /state/<conf>.conf}, started once {@code ready} succeeds. */
  private static ImageContainer proxy(Path state, String conf, String ready) {
    return new ImageContainer("proxy", "--config", "/state/" + conf + ".conf")
        .withNetworkMode("host")
        .withFileSystemBind(state.toString(), "/state", BindMode.READ_WRITE)
        .waitingFor(Wait.forSuccessfulCommand(ready).withStartupTimeout(Duration.ofSeconds(60)))
        .started();
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
}

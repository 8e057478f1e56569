package io.efscsi.it.cluster;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A real Kubernetes control plane on 127.0.0.1: Debian's etcd and the v1.26 kube-apiserver from
 * {@code ../shared/k8s}, with Node and RBAC authorisation, service-account tokens signed by a key
 * made here, a static token for the admin, and a CA of its own. Everything lives in one temporary
 * directory ({@code /tmp/efs-csi-cluster-*}) and goes with {@link #close()}. A start that fails
 * throws: a suite that needs the cluster fails, never skips.
 */
public class ControlPlane implements AutoCloseable {

  /** The admin's static token (group system:masters). */
  static final String ADMIN_TOKEN = "efs-csi-admin-token";

  static final String CONTROLLER_MANAGER_TOKEN = "efs-csi-kcm-token";
  static final String SCHEDULER_TOKEN = "efs-csi-scheduler-token";
  static final String NODE_TOKEN = "efs-csi-node-token";

  /**
   * The one node's name: kubelet refuses a loopback node IP, so the API server reaches it by this
   * name (logs, exec).
   */
  public static final String NODE_NAME = "localhost";

  final Path dir;
  final List<Process> processes = new ArrayList<>();
  private int apiPort;
  private String apiHost;

  /** The third byte of the API server's address, 198.18.subnet.1 (and of the pod network's). */
  int subnet;

  private List<String> apiServerCommand;
  private Process apiServer;
  private SSLContext trust;

  /** Starts etcd and the API server and waits until the API server is ready. */
  public static ControlPlane start() throws IOException, InterruptedException {
    ControlPlane c = new ControlPlane(Files.createTempDirectory("efs-csi-cluster-"));
    try {
      c.startControlPlane();
      return c;
    } catch (IOException | InterruptedException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  ControlPlane(Path dir) {
    this.dir = dir;
  }

  void startControlPlane() throws IOException, InterruptedException {
    Path bin = KubeBinaries.dir();
    // The kubernetes Service's address is what kubelet gives pods (KUBERNETES_SERVICE_HOST); with
    // no kube-proxy, the API server itself listens there: the first address of a /24 of the
    // benchmarking range (RFC 2544, on no real network) picked at random (two clusters never
    // collide), added to lo, port 443 as the Service says. Not 127/8: a pod on the pod network
    // ({@link Cluster}) reaches a host address through its bridge, but never the host's loopback.
    java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
    for (int attempt = 1; ; attempt++) {
      subnet = r.nextInt(0, 256);
      apiHost = "198.18." + subnet + ".1";
      Images.Result added = ip("addr", "add", apiHost + "/32", "dev", "lo");
      if (added.exit() == 0) {
        break;
      }
      apiHost = null;
      if (attempt >= 5) {
        throw new IOException("cannot add an address for the API server to lo: " + added.output());
      }
    }
    String net = "198.18." + subnet + ".";
    Pki.make(dir, apiHost);
    Files.writeString(
        dir.resolve("tokens.csv"),
        String.join(
            "\n",
            ADMIN_TOKEN + ",admin,admin-uid,\"system:masters\"",
            CONTROLLER_MANAGER_TOKEN + ",system:kube-controller-manager,kcm-uid",
            SCHEDULER_TOKEN + ",system:kube-scheduler,scheduler-uid",
            NODE_TOKEN + ",system:node:" + NODE_NAME + ",node-uid,\"system:nodes\"",
            ""));
    int etcdPort = freePort();
    int peerPort = freePort();
    apiPort = 443;
    processes.add(
        run(
            "etcd",
            List.of(
                "etcd",
                "--name=efs-csi-test",
                "--data-dir=" + dir.resolve("etcd"),
                "--listen-client-urls=http://127.0.0.1:" + etcdPort,
                "--advertise-client-urls=http://127.0.0.1:" + etcdPort,
                "--listen-peer-urls=http://127.0.0.1:" + peerPort,
                "--initial-advertise-peer-urls=http://127.0.0.1:" + peerPort,
                "--initial-cluster=efs-csi-test=http://127.0.0.1:" + peerPort,
                "--quota-backend-bytes=1073741824")));
    apiServerCommand =
        List.of(
            bin.resolve("kube-apiserver").toString(),
            "--etcd-servers=http://127.0.0.1:" + etcdPort,
            "--bind-address=" + apiHost,
            "--advertise-address=" + apiHost,
            "--secure-port=" + apiPort,
            "--tls-cert-file=" + dir.resolve("apiserver.crt"),
            "--tls-private-key-file=" + dir.resolve("apiserver.key"),
            "--client-ca-file=" + dir.resolve("ca.crt"),
            "--token-auth-file=" + dir.resolve("tokens.csv"),
            "--authorization-mode=Node,RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file=" + dir.resolve("sa.pub"),
            "--service-account-signing-key-file=" + dir.resolve("sa.key"),
            "--api-audiences=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=" + net + "0/24",
            "--endpoint-reconciler-type=none",
            "--allow-privileged=true",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            "--kubelet-client-certificate=" + dir.resolve("admin.crt"),
            "--kubelet-client-key=" + dir.resolve("admin.key"),
            "--v=1");
    apiServer = run("kube-apiserver", apiServerCommand);
    processes.add(apiServer);
    trust = trusting(dir.resolve("ca.crt"));
    awaitReady(Duration.ofSeconds(90));
    kubeconfig("admin", ADMIN_TOKEN);
  }

  /** The API server's URL. */
  public String url() {
    return "https://" + apiHost + ":" + apiPort;
  }

  /** The API server's address, also the kubernetes Service's (what pods are told). */
  public String apiHost() {
    return apiHost;
  }

  /**
   * Stops the API server (SIGTERM, as a control plane upgrade replaces it; SIGKILL after 15 s):
   * etcd and every other process stay. {@link #startApiServer} brings it back on the same address,
   * port and data.
   */
  public synchronized void stopApiServer() throws InterruptedException {
    Process p = apiServer;
    if (p == null || !p.isAlive()) {
      throw new IllegalStateException("the API server is not running");
    }
    p.destroy();
    if (!p.waitFor(15, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    processes.remove(p);
  }

  /** Starts the API server stopped by {@link #stopApiServer} and waits until it is ready. */
  public synchronized void startApiServer() throws IOException, InterruptedException {
    if (apiServer != null && apiServer.isAlive()) {
      throw new IllegalStateException("the API server is running");
    }
    // its log goes on where the first one ended
    apiServer =
        new ProcessBuilder(apiServerCommand)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dir.resolve("kube-apiserver.log").toFile()))
            .start();
    processes.add(apiServer);
    awaitReady(Duration.ofSeconds(90));
  }

  /** This cluster's directory (certificates, logs, etcd's data). */
  public Path dir() {
    return dir;
  }

  /** The cluster CA's certificate file. */
  public Path caFile() {
    return dir.resolve("ca.crt");
  }

  /** A client with the admin's token. */
  public KubernetesClient admin() {
    return client(ADMIN_TOKEN);
  }

  /** A client that presents {@code token}. */
  public KubernetesClient client(String token) {
    Config config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl(url())
            .withCaCertFile(caFile().toString())
            .withOauthToken(token)
            .withRequestRetryBackoffLimit(0)
            .build();
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /**
   * Writes a kubeconfig for {@code token} (what a process outside the cluster reads through
   * KUBECONFIG), and returns its path.
   */
  public Path kubeconfig(String name, String token) throws IOException {
    Path file = dir.resolve("kubeconfig-" + name);
    Files.writeString(
        file,
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: test
          cluster:
            server: %s
            certificate-authority: %s
        users:
        - name: %s
          user:
            token: %s
        contexts:
        - name: test
          context:
            cluster: test
            user: %s
        current-context: test
        """
            .formatted(url(), caFile(), name, token, name));
    return file;
  }

  /** An HTTP client that trusts this cluster's CA. */
  public SSLContext trust() {
    return trust;
  }

  void awaitReady(Duration limit) throws IOException, InterruptedException {
    HttpClient http = HttpClient.newBuilder().sslContext(trust).build();
    long end = System.nanoTime() + limit.toNanos();
    String last = "no answer";
    while (System.nanoTime() < end) {
      for (Process p : processes) {
        if (!p.isAlive()) {
          throw new IOException(
              "the control plane did not start: a process exited with "
                  + p.exitValue()
                  + "; logs in "
                  + dir
                  + "\n"
                  + tail(dir.resolve("kube-apiserver.log"))
                  + tail(dir.resolve("etcd.log")));
        }
      }
      try {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create(url() + "/readyz"))
                    .header("Authorization", "Bearer " + ADMIN_TOKEN)
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
        last = r.statusCode() + " " + r.body();
      } catch (IOException e) {
        last = e.toString();
      }
      Thread.sleep(250);
    }
    throw new IOException(
        "the API server was not ready within "
            + limit
            + ": "
            + last
            + "\n"
            + tail(dir.resolve("kube-apiserver.log")));
  }

  Process run(String name, List<String> command) throws IOException {
    return new ProcessBuilder(command)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve(name + ".log").toFile())
        .start();
  }

  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())) + "\n";
    } catch (IOException e) {
      return "(no " + log.getFileName() + ")\n";
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static SSLContext trusting(Path caFile) throws IOException {
    try (var in = Files.newInputStream(caFile)) {
      X509Certificate ca =
          (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setCertificateEntry("ca", ca);
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (java.security.GeneralSecurityException e) {
      throw new IOException("cannot trust " + caFile + ": " + e, e);
    }
  }

  /** Stops every process (the last started first) and removes the directory. */
  @Override
  public void close() {
    if (System.getProperty("efscsi.cluster.keep") != null) {
      System.err.println(
          "efscsi.cluster.keep: the cluster stays up; KUBECONFIG="
              + dir.resolve("kubeconfig-admin")
              + " kubectl get pods -A; stop it with scripts/cluster-down "
              + dir);
      return;
    }
    stopProcesses();
    removeApiAddress();
    try {
      io.efscsi.it.HostCleanup.deleteTree(dir);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Removes the API server's address from lo (once its processes are stopped). */
  void removeApiAddress() {
    if (apiHost == null) {
      return;
    }
    try {
      Images.Result r = ip("addr", "del", apiHost + "/32", "dev", "lo");
      if (r.exit() != 0) {
        System.err.println("cannot remove " + apiHost + " from lo: " + r.output());
      }
      apiHost = null;
    } catch (IOException e) {
      System.err.println("cannot remove " + apiHost + " from lo: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static Images.Result ip(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("ip"));
    command.addAll(List.of(args));
    return Images.exec(30, command);
  }

  /** SIGTERM to each process, the last started first; SIGKILL after 15 s. */
  void stopProcesses() {
    for (Process p : processes.reversed()) {
      p.destroy();
      try {
        if (!p.waitFor(15, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
    processes.clear();
  }
}

package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.iam.CertificateAdoption;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.takeover.AdoptedCertificates;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.takeover.EfsUtilsStateParser;
import io.efscsi.node.takeover.Takeover;
import io.efscsi.node.takeover.TakeoverEvents;
import io.efscsi.node.takeover.TakeoverOptions;
import io.efscsi.node.takeover.TakeoverPlan;
import io.efscsi.supervisor.PortAllocator;
import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.SupervisorConfig;
import io.efscsi.supervisor.cgroup.NoCgroupPlacer;
import io.efscsi.supervisor.host.Children;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.process.JavaProxyLauncher;
import io.efscsi.supervisor.process.ProcProcessTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Taking over the Go driver's mount with real processes: efs-utils' files written as mount.efs
 * writes them, a real stunnel client as the Go driver's proxy in front of the lab (stunnel TLS
 * server, nfs-ganesha), libnfs reading through the port, and the real supervisor launching the
 * packaged proxy. This kernel has no NFS client, so the mount table is a mountinfo file holding the
 * line the kernel would show; the kernel VM suite runs the same takeover on a real NFS mount.
 */
class TakeoverIT {

  static NfsLab lab;
  static final String FS = "fs-12345678";

  Path root;
  EfsUtilsDirs dirs;
  Path mountinfo;
  final List<ProxySupervisor> supervisors = new ArrayList<>();
  Process oldProxy;
  final List<String> refusals = new ArrayList<>();

  final TakeoverEvents events =
      new TakeoverEvents() {
        @Override
        public synchronized void refused(int port, List<String> mountPoints, String reason) {
          refusals.add(port + " " + mountPoints + " " + reason);
          TakeoverEvents.LOG.refused(port, mountPoints, reason);
        }

        @Override
        public void tookOver(TakeoverPlan plan, String certificate) {
          TakeoverEvents.LOG.tookOver(plan, certificate);
        }
      };

  @BeforeAll
  static void startLab() throws Exception {
    lab = new NfsLab(Files.createTempDirectory("efscsi-takeover-lab"), 8);
  }

  @AfterAll
  static void stopLab() throws Exception {
    if (lab != null) {
      lab.closeAndDelete();
    }
  }

  @BeforeEach
  void dirs() throws Exception {
    root = Files.createTempDirectory("efscsi-takeover");
    dirs =
        new EfsUtilsDirs(
            Files.createDirectories(root.resolve("var-run-efs")),
            Files.createDirectories(root.resolve("var-amazon-efs")),
            Files.createDirectories(root.resolve("etc-amazon-efs-legacy")));
    mountinfo = root.resolve("mountinfo");
    Files.writeString(mountinfo, "22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n");
  }

  @AfterEach
  void cleanUp() throws Exception {
    if (oldProxy != null) {
      oldProxy.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    for (ProxySupervisor s : supervisors) {
      s.stopAll();
      s.close();
    }
    try (var files = Files.walk(root)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }

  @Test
  void theGoDriversTlsMountIsTakenOverOnItsPortAndReleasedByNodeUnpublish() throws Exception {
    int port = NfsLab.freePort();
    String target = root.resolve("pods/7c0d/volumes/kubernetes.io~csi/pv-a/mount").toString();
    GoDriverMount m = new GoDriverMount(target, port, true);
    m.write();
    oldProxy = m.startStunnel();
    NfsLab.awaitPort(port, Duration.ofSeconds(10));
    lab.readExact(port); // the pod's data path, as the Go driver left it
    mount(target, port);

    ProxySupervisor sup = supervisor();
    Takeover takeover = takeover();
    Takeover.Report r = takeover.pass(sup);
    assertEquals(new Takeover.Report(0, 1, 0, 0), r, "the old proxy listens: not ours yet");
    assertEquals(List.of(), sup.status());

    oldProxy.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // the Go driver's container is gone
    long t0 = System.nanoTime();
    while (takeover.pass(sup).takenOver() == 0) {
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30), "not taken over");
      Thread.sleep(200);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println("takeover: port " + port + " listening again " + ms + " ms after the kill");
    lab.readExact(port); // every byte, through our proxy, TLS checked against the same CA/name

    ProxyStatus st = sup.status().getFirst();
    assertEquals("efs-utils:" + m.stem(), st.key());
    assertEquals(port, st.port());
    assertEquals(java.util.Set.of(target), st.users());
    assertEquals(ProxyStatus.State.RUNNING, st.state());
    assertEquals(1, sup.stats().takeovers.get());
    Path certDir = sup.certificateDir().resolve("efs-utils-" + port);
    assertEquals(
        Files.readString(m.certificate()),
        Files.readString(certDir.resolve("certificate.pem")),
        "efs-utils' own certificate is presented (and renewed from now on)");
    assertEquals(List.of(), refusals);

    // our own restart: the new supervisor adopts it like any proxy of ours
    sup.close();
    ProxySupervisor sup2 = supervisor();
    assertEquals(1, sup2.stats().adopted.get());
    Takeover takeover2 = takeover();
    assertEquals(0, takeover2.pass(sup2).takenOver(), "a port of ours is never taken again");
    lab.readExact(port);

    // NodeUnpublish: the pod's NFS mount goes, then the proxy, its record and certificate
    Files.writeString(mountinfo, "22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n");
    takeover2.unpublished(sup2, Path.of(target));
    assertEquals(List.of(), sup2.status());
    assertFalse(sup2.holds(port));
    assertFalse(Files.exists(certDir));
    assertTrue(PortAllocator.loopbackBindable(port), "nothing listens on the port any more");
    try (var records = Files.list(root.resolve("state/proxies"))) {
      assertEquals(List.of(), records.toList(), "no record, config, socket or log left");
    }
  }

  @Test
  void stateThatCannotBeUnderstoodIsLeftAloneAndReportedOnce() throws Exception {
    int port = NfsLab.freePort();
    String target = root.resolve("pods/9f1e/volumes/kubernetes.io~csi/pv-b/mount").toString();
    GoDriverMount m = new GoDriverMount(target, port, true);
    m.fips = true;
    m.write();
    mount(target, port);
    ProxySupervisor sup = supervisor();
    Takeover takeover = takeover();
    assertEquals(new Takeover.Report(0, 0, 1, 0), takeover.pass(sup));
    assertEquals(new Takeover.Report(0, 0, 1, 0), takeover.pass(sup));
    assertEquals(1, refusals.size(), "one report, not one per pass: " + refusals);
    assertTrue(refusals.getFirst().contains("FIPS"), refusals.getFirst());
    assertEquals(List.of(), sup.status());
    assertTrue(PortAllocator.loopbackBindable(port), "nothing was started on the port");
  }

  ProxySupervisor supervisor() throws Exception {
    ProxySupervisor s =
        new ProxySupervisor(
            SupervisorConfig.defaults(root.resolve("state"))
                .withPorts(20049, 21049)
                .withTimings(
                    Duration.ofSeconds(1), Duration.ofSeconds(3), 3, Duration.ofMinutes(1)),
            new NoCgroupPlacer("TakeoverIT"),
            new JavaProxyLauncher(
                JavaProxyLauncher.currentJava(),
                PackagedDriver.distDir(),
                "setsid",
                Children.onThisHost()),
            new ProcProcessTable(),
            new ProcMountTable(mountinfo),
            mountPoint -> {},
            PortAllocator::loopbackBindable,
            Clock.systemUTC(),
            new ProxySupervisor.Listener() {});
    supervisors.add(s);
    s.start();
    return s;
  }

  Takeover takeover() throws Exception {
    ClientCertificates certs =
        new ClientCertificates(
            "node-1",
            new ClientCertificates.ClientInfo("k8s", "test"),
            source -> {
              throw new IllegalStateException("no IAM in this test");
            },
            java.time.InstantSource.system());
    ProxySupervisor any = supervisors.getLast();
    return new Takeover(
        new TakeoverOptions(true, dirs, Duration.ofSeconds(1)),
        new ProcMountTable(mountinfo),
        p -> !PortAllocator.loopbackBindable(p),
        new AdoptedCertificates(
            new CertificateAdoption(certs, java.time.InstantSource.system()),
            Optional.empty(),
            any::certificateDir),
        events,
        Clock.systemUTC());
  }

  /**
   * {@code efs-csi preflight node}, the packaged command, on the same files: the table says which
   * mount the takeover takes, which it would refuse (and why), which it leaves alone, and exits 1.
   */
  @Test
  void thePreflightTablesEachGoDriverMountAsTheTakeoverWouldTakeIt() throws Exception {
    String a = root.resolve("pods/1/volumes/kubernetes.io~csi/pv-a/mount").toString();
    int portA = NfsLab.freePort();
    new GoDriverMount(a, portA, true).write();
    mount(a, portA);
    String b = root.resolve("pods/2/volumes/kubernetes.io~csi/pv-b/mount").toString();
    int portB = NfsLab.freePort();
    GoDriverMount noConfig = new GoDriverMount(b, portB, true);
    noConfig.write();
    Files.delete(dirs.stateDir().resolve("stunnel-config." + noConfig.stem()));
    mount(b, portB);
    String c = root.resolve("pods/3/volumes/kubernetes.io~csi/pv-c/mount").toString();
    int portC = NfsLab.freePort();
    mount(c, portC); // no efs-utils state names its port
    Files.writeString(
        mountinfo,
        "500 22 0:99 / /mnt/plain rw,relatime shared:400 - nfs4"
            + " fs-12345678.efs.us-east-1.amazonaws.com:/ rw,vers=4.1,hard,proto=tcp,timeo=600,"
            + "retrans=2,sec=sys,addr=10.0.0.5\n",
        java.nio.file.StandardOpenOption.APPEND);

    Process p =
        new ProcessBuilder(
                PackagedDriver.distDir().resolve("bin/efs-csi").toString(),
                "preflight",
                "node",
                "--mountinfo",
                mountinfo.toString(),
                "--efs-utils-state-dir",
                dirs.stateDir().toString(),
                "--efs-utils-config-dir-path",
                dirs.configDir().toString(),
                "--efs-utils-config-legacy-dir-path",
                dirs.legacyConfigDir().toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(1, p.exitValue(), out);
    List<String> lines = out.lines().toList();
    assertTrue(lines.get(0).matches("KIND +NAME +VERDICT +WHY"), out);
    assertTrue(
        row(lines, a)
            .matches(
                ".*take-over +"
                    + FS
                    + ": stunnel with TLS to 127\\.0\\.0\\.1:\\d+;"
                    + " its client certificate is reused"),
        out);
    assertTrue(row(lines, b).matches(".*refuse +efs-utils state .* has no tunnel config"), out);
    assertTrue(row(lines, c).matches(".*refuse +no efs-utils state names port " + portC), out);
    assertTrue(
        row(lines, "/mnt/plain")
            .matches(
                ".*leave +NFS straight to fs-12345678\\.efs\\.us-east-1\\.amazonaws\\.com:/ .*"),
        out);
    assertEquals(
        "0 ok, 1 take-over, 1 leave, 2 refuse: fix the refused ones before switching (exit 1)",
        lines.getLast(),
        out);
  }

  private static String row(List<String> lines, String name) {
    return lines.stream()
        .filter(l -> l.startsWith("mount ") && l.contains(name))
        .findFirst()
        .orElse("no row for " + name);
  }

  /** The kernel's mountinfo line for the Go driver's mount at the pod's target. */
  void mount(String target, int port) throws Exception {
    String line =
        "412 22 0:88 / "
            + target
            + " rw,relatime shared:300 - nfs4 127.0.0.1:/export rw,vers=4.1,rsize=1048576,"
            + "wsize=1048576,namlen=255,hard,noresvport,proto=tcp,port="
            + port
            + ",timeo=600,retrans=2,sec=sys,clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.1\n";
    Path tmp = root.resolve("mountinfo.tmp");
    Files.writeString(tmp, Files.readString(mountinfo) + line);
    Files.move(tmp, mountinfo, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** What mount.efs (1.3x, stunnel) leaves for a TLS mount, and its stunnel. */
  final class GoDriverMount {
    final String mountPoint;
    final int port;
    final boolean tls;
    boolean fips;

    GoDriverMount(String mountPoint, int port, boolean tls) {
      this.mountPoint = mountPoint;
      this.port = port;
      this.tls = tls;
    }

    String stem() {
      return FS + "." + EfsUtilsStateParser.fileSafe(mountPoint) + "." + port;
    }

    Path certificate() {
      return dirs.stateDir().resolve(stem() + "+/certificate.pem");
    }

    /** The config with the paths efs-utils records (inside the Go driver's container). */
    String config() {
      return String.join(
          "\n",
          "fips = " + (fips ? "yes" : "no"),
          "foreground = yes",
          "socket = l:SO_REUSEADDR=yes",
          "socket = a:SO_BINDTODEVICE=lo",
          "pid = /var/run/efs/" + stem() + "+/stunnel.pid",
          "[efs]",
          "client = yes",
          "accept = 127.0.0.1:" + port,
          "connect = 127.0.0.1:" + lab.tlsPort,
          "sslVersion = TLSv1.2",
          "renegotiation = no",
          "TIMEOUTbusy = 20",
          "TIMEOUTclose = 0",
          "TIMEOUTidle = 70",
          "delay = yes",
          "verify = 2",
          "CAfile = " + lab.dir.resolve("srv.crt"),
          "cert = /var/run/efs/" + stem() + "+/certificate.pem",
          "key = /etc/amazon/efs/privateKey.pem",
          "checkHost = " + NfsLab.SERVER_NAME,
          "libwrap = no");
    }

    void write() throws Exception {
      Path key = dirs.configDir().resolve("privateKey.pem");
      if (!Files.exists(key)) {
        EfsUtilsFiles.key(key);
      }
      Files.createDirectories(certificate().getParent());
      EfsUtilsFiles.certificate(key, certificate(), EfsUtilsFiles.FILE_SYSTEM + FS);
      Files.writeString(dirs.stateDir().resolve("stunnel-config." + stem()), config());
      Files.writeString(
          dirs.stateDir().resolve(stem()),
          "{\"pid\": 31337, \"cmd\": [\"/usr/bin/stunnel\", \"/var/run/efs/stunnel-config."
              + stem()
              + "\"], \"files\": [\"/var/run/efs/stunnel-config."
              + stem()
              + "\"], \"mount_time\": 1763900000.25, \"mountpoint\": \""
              + mountPoint
              + "\", \"mountStateDir\": \""
              + stem()
              + "+\", \"commonName\": \"node-1\", \"region\": \"us-east-1\","
              + " \"certificateCreationTime\": \"251124040000Z\", \"certificate\":"
              + " \"/var/run/efs/"
              + stem()
              + "+/certificate.pem\", \"privateKey\": \"/etc/amazon/efs/privateKey.pem\","
              + " \"fsId\": \""
              + FS
              + "\", \"unmount_count\": 0}");
      // older than the quiet period: efs-utils' watchdog died with the container
      Files.setLastModifiedTime(
          dirs.stateDir().resolve(stem()),
          java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(60)));
    }

    /** The Go driver's stunnel, run from the same config with the paths as seen here. */
    Process startStunnel() throws Exception {
      Path here = root.resolve("stunnel-here.conf");
      Files.writeString(
          here,
          config()
              .replace("/var/run/efs/", dirs.stateDir() + "/")
              .replace("/etc/amazon/efs/", dirs.configDir() + "/")
              .replace("socket = a:SO_BINDTODEVICE=lo\n", ""));
      return new ProcessBuilder("stunnel", here.toString())
          .redirectErrorStream(true)
          .redirectOutput(root.resolve("old-stunnel.log").toFile())
          .start();
    }
  }
}

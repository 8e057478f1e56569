package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.handback.GoDriverImage;
import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.proxy.json.Json;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The handback's files judged by the real thing: efs-utils' own watchdog of each release line
 * (../shared/efs-utils, unpacked here, run unmodified: its {@code check_efs_mounts}, twice) over
 * the state, tunnel config and certificate directory the handback writes for one of our TLS
 * volumes, in a throwaway mount namespace laid out as the Go driver's image is (rpm: the tunnel
 * only under {@code /usr/sbin}, {@code /sbin} a link to it, stunnel as {@code /usr/bin/stunnel5} on
 * Amazon Linux 2) or as a Debian package lays it out ({@code /usr/bin}; the handback told so with
 * {@code --tunnel-binary}). efs-utils' paths ({@code /var/run/efs}, {@code /etc/amazon/efs}) and
 * {@code /proc/<pid>/mounts} (the mount, with its port, that the kernel would show) are bound over
 * inside that namespace only. stunnel is real; efs-proxy, which cannot be built here, is a stand-in
 * script at the path that records how it was started.
 *
 * <p>Asserted: the first pass starts the tunnel the state names, exactly as written, and records
 * its pid; with the certificate come due (its creation time three hours back, as time would leave
 * it), the second pass renews it over the written {@code <stem>+/} directory with openssl and keeps
 * the tunnel. And the path the handback named before (a Debian one) fails the watchdog on the Go
 * driver's image, as it did: the check can fail.
 */
class EfsUtilsWatchdogIT {

  enum Layout {
    /** The Go driver's image: efs-utils' rpm on Amazon Linux. */
    RPM,
    /** efs-utils from a Debian package. */
    DEBIAN
  }

  @TempDir static Path unpacked;

  @TempDir Path t;

  @BeforeAll
  static void unpack() throws Exception {
    EfsUtilsReleases.unpack(unpacked, EfsUtilsReleases.ALL.toArray(String[]::new));
  }

  @ParameterizedTest(name = "efs-utils {0} (Go driver {1}), {2} layout")
  @CsvSource({
    "1.36.0, v1.7.7, RPM",
    "1.36.0, v1.7.7, DEBIAN",
    "2.4.2, v2.1.15, RPM",
    "2.4.2, v2.1.4, RPM",
    "2.4.2, v2.1.15, DEBIAN",
    "3.2.0, v3.4.1, RPM",
    "3.2.0, v3.4.1, DEBIAN"
  })
  void theWatchdogStartsTheTunnelTheHandbackNamesAndRenewsItsCertificate(
      String efsUtils, String goDriver, Layout layout) throws Exception {
    GoDriverImage image = GoDriverImage.of(goDriver);
    boolean proxy = image.release().efsProxy();
    Optional<String> told =
        layout == Layout.DEBIAN
            ? Optional.of(proxy ? "/usr/bin/efs-proxy" : "/usr/bin/stunnel")
            : Optional.empty();
    Run r = handBackAndWatch(efsUtils, image, layout, told);
    assertEquals(0, r.exit(), "the watchdog's passes went through:\n" + r.log());
    Map<?, ?> f = r.facts();
    List<?> cmd = (List<?>) f.get("cmd");
    String binary = told.orElse(proxy ? "/sbin/efs-proxy" : "/usr/bin/stunnel5");
    assertEquals(binary, cmd.getFirst(), "the tunnel the state names");
    assertTrue(((Number) f.get("pid")).longValue() > 0, "its pid recorded: " + f);
    assertEquals(Boolean.TRUE, f.get("alive"), "the tunnel runs: " + f);
    assertTrue(r.log().contains("Starting TLS tunnel: \"" + String.join(" ", str(cmd)) + "\""));
    if (proxy) {
      // the stand-in at the path: started with exactly the state's command line
      List<String> argv = Files.readAllLines(t.resolve("tunnel-argv"));
      assertEquals(String.join(" ", str(cmd)), argv.getFirst());
      assertEquals("reload", argv.getLast(), "told to reread its renewed certificate: " + argv);
    } else {
      assertEquals(Boolean.TRUE, f.get("listening"), "stunnel listens on the port: " + f);
    }
    // the renewal: a new certificate over our <stem>+/ dir, the same tunnel
    assertNotEquals(f.get("cert_before"), f.get("cert_after"), "the certificate was renewed");
    assertNotEquals(f.get("created_rewound"), f.get("created_after"), "its time recorded");
    assertEquals(f.get("pid"), f.get("pid_after"), "the tunnel kept");
    assertTrue(r.log().contains("Refreshing self-signed certificate"), r.log());
  }

  @Test
  void theTunnelPathTheHandbackNamedBeforeFailsTheWatchdogOnTheGoDriversImage() throws Exception {
    Run r =
        handBackAndWatch(
            "3.2.0", GoDriverImage.of("v3.4.1"), Layout.RPM, Optional.of("/usr/bin/efs-proxy"));
    assertEquals(1, r.exit(), "fatal_error ends the watchdog:\n" + r.log());
    assertTrue(
        r.log()
            .contains(
                "Watchdog failed to start efs-proxy due to [Errno 2] No such file or directory:"
                    + " '/usr/bin/efs-proxy'"),
        r.log());
  }

  private record Run(int exit, String log, Map<?, ?> facts) {}

  /** The handback's files for one TLS volume of ours, then the watchdog's two passes over them. */
  private Run handBackAndWatch(
      String efsUtils, GoDriverImage image, Layout layout, Optional<String> tunnelBinary)
      throws Exception {
    Path src = unpacked.resolve("efs-utils-v" + efsUtils);
    EfsUtilsDirs dirs =
        new EfsUtilsDirs(
            Files.createDirectories(t.resolve("var-run-efs")),
            Files.createDirectories(t.resolve("etc-amazon-efs")),
            Files.createDirectories(t.resolve("etc-amazon-efs-legacy")));
    Files.copy(src.resolve("dist/efs-utils.conf"), dirs.configDir().resolve("efs-utils.conf"));
    Files.copy(src.resolve("dist/efs-utils.crt"), dirs.configDir().resolve("efs-utils.crt"));
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path staging = Files.createDirectories(t.resolve("kubelet/plugins/efs/pv-1/globalmount"));

    // our proxy's record and certificate, as the node plugin leaves them (an access point, no
    // IAM: the renewal then needs no AWS credentials), handed back
    Handed h =
        OurTlsVolume.handBack(
            t.resolve("efs-csi"),
            dirs,
            image,
            tunnelBinary,
            port,
            staging.toString(),
            Optional.of("fsap-0123456789abcdef0"));
    String options =
        "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,soft,noresvport,proto=tcp,port="
            + port
            + ",timeo=50,retrans=2,sec=sys,clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.1";

    // the image's layout: the tunnel where that image has it
    Path extraSbin = Files.createDirectories(t.resolve("layout/usr-sbin"));
    Path extraBin = Files.createDirectories(t.resolve("layout/usr-bin"));
    String standIn =
        """
        #!/usr/bin/python3
        # efscsi-watchdog-it: efs-proxy's stand-in, started by efs-utils' watchdog. Python, not sh:
        # a shell cannot trap a signal ignored when it started (a run under nohup ignores SIGHUP
        # all the way down, and then the renewal's SIGHUP went unnoted), a program can
        import signal, sys, time
        def note(line):
            with open('%1$s', 'a') as f:
                f.write(line + '\\n')
        note(' '.join(sys.argv))
        # efs-proxy rereads its certificate on SIGHUP, which the watchdog sends after a renewal
        signal.signal(signal.SIGHUP, lambda *_: note('reload'))
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            time.sleep(1)
        """
            .formatted(t.resolve("tunnel-argv"));
    Path tunnelDir = layout == Layout.RPM ? extraSbin : extraBin;
    if (image.release().efsProxy()) {
      EfsUtilsReleases.executable(tunnelDir.resolve("efs-proxy"), standIn);
    } else if (layout == Layout.RPM) {
      // Amazon Linux 2's stunnel5 package: stunnel 5 under that name (Debian's stunnel is 5.x)
      Files.createSymbolicLink(extraBin.resolve("stunnel5"), Path.of("/usr/bin/stunnel4"));
    }
    Files.createDirectories(t.resolve("layout/etc/amazon/efs"));
    Path mounts = t.resolve("mounts");
    Files.writeString(
        mounts, "127.0.0.1:/ " + staging + " nfs4 " + options + " 0 0\n", StandardCharsets.UTF_8);
    Path runner = t.resolve("runner.py");
    Files.writeString(runner, RUNNER, StandardCharsets.UTF_8);
    Path facts = t.resolve("facts.json");
    Path ns = t.resolve("ns.sh");
    Files.writeString(
        ns,
        """
        set -eu
        T='%1$s'
        mount -t overlay overlay -o "lowerdir=$T/layout/usr-sbin:/usr/sbin" /usr/sbin
        mount -t overlay overlay -o "lowerdir=$T/layout/usr-bin:/usr/bin" /usr/bin
        mount -t overlay overlay -o "lowerdir=$T/layout/etc:/etc" /etc
        mount --bind "$T/etc-amazon-efs" /etc/amazon/efs
        mount -t tmpfs tmpfs /run
        mkdir /run/efs
        mount --bind "$T/var-run-efs" /run/efs
        # the watchdog's /proc/mounts: this process's, once it is the watchdog (exec keeps the pid)
        sh -c 'while [ ! -e "$0/go" ]; do sleep 0.02; done; exec /usr/bin/python3 "$0/runner.py" "$@"' \
          "$T" '%2$s' '%3$s' '%4$s' '%5$d' '%6$s' &
        p=$!
        mount --bind "$T/mounts" "/proc/$p/mounts"
        touch "$T/go"
        wait "$p"
        """
            .formatted(
                t,
                src.resolve("src/watchdog/__init__.py"),
                "/var/run/efs/" + h.stem(),
                facts,
                image.release().efsProxy() ? 0 : port,
                image.release().efsProxy() ? t.resolve("tunnel-argv").toString() : "-"),
        StandardCharsets.UTF_8);
    Process p =
        new ProcessBuilder("unshare", "-m", "--propagation", "private", "bash", ns.toString())
            .redirectErrorStream(true)
            .start();
    String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the watchdog did not finish in 120 s:\n" + log);
    }
    Map<?, ?> f =
        Files.exists(facts) ? (Map<?, ?>) Json.parse(Files.readString(facts).strip()) : Map.of();
    // the runner killed the tunnels the watchdog started: none outlives the test
    for (String k : List.of("pid", "pid_after")) {
      if (f.get(k) instanceof Number pid) {
        Optional<ProcessHandle> left = ProcessHandle.of(pid.longValue());
        boolean alive = left.isPresent() && left.get().isAlive() && !waitGone(left.get());
        left.ifPresent(ProcessHandle::destroyForcibly);
        assertTrue(!alive, "the tunnel " + pid + " outlived the watchdog that started it");
      }
    }
    return new Run(p.exitValue(), log, f);
  }

  /**
   * Loads efs-utils' watchdog module as it is and runs {@code check_efs_mounts} twice, as its main
   * loop would a second apart; writes what it left (pid, certificate, tunnel) as JSON; kills the
   * tunnels it started.
   */
  private static final String RUNNER =
      """
      import hashlib, importlib.util, json, logging, socket, sys, time
      from datetime import datetime, timedelta, timezone
      src, state_file, out, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
      argv = sys.argv[5]  # the efs-proxy stand-in's record of its start and signals, or -
      logging.basicConfig(stream=sys.stdout, level=logging.DEBUG,
                          format="watchdog %(levelname)s %(message)s")
      spec = importlib.util.spec_from_file_location("watchdog", src)
      wd = importlib.util.module_from_spec(spec)
      spec.loader.exec_module(wd)
      config = wd.read_config()
      procs, facts = [], {}
      def state():
          with open(state_file) as f:
              return json.load(f)
      def digest(path):
          with open(path, "rb") as f:
              return hashlib.sha256(f.read()).hexdigest()
      try:
          wd.check_efs_mounts(config, procs, 30, 5)
          s = state()
          facts["cmd"], facts["pid"] = s["cmd"], s.get("pid")
          facts["alive"] = bool(s.get("pid")) and wd.is_pid_running(s["pid"])
          facts["listening"] = False
          for _ in range(100 if port else 0):  # stunnel's port; the stand-in does not listen
              try:
                  socket.create_connection(("127.0.0.1", port), timeout=1).close()
                  facts["listening"] = True
                  break
              except OSError:
                  time.sleep(0.05)
          facts["cert_before"] = digest(s["certificate"])
          due = datetime.now(timezone.utc) - timedelta(hours=3)
          s["certificateCreationTime"] = due.strftime("%y%m%d%H%M%SZ")
          facts["created_rewound"] = s["certificateCreationTime"]
          wd.rewrite_state_file(s, "/var/run/efs", state_file.rsplit("/", 1)[1])
          time.sleep(1)
          wd.check_efs_mounts(config, procs, 30, 5)
          s = state()
          facts["pid_after"] = s.get("pid")
          facts["created_after"] = s.get("certificateCreationTime")
          facts["cert_after"] = digest(s["certificate"])
          # the stand-in notes the renewal's SIGHUP: wait for the note (up to 10 s) before the
          # tunnels are killed
          for _ in range(200 if argv != "-" else 0):
              with open(argv) as f:
                  if f.read().splitlines()[-1:] == ["reload"]:
                      break
              time.sleep(0.05)
      finally:
          for p in procs:
              p.kill()
              p.wait()
          with open(out, "w") as f:
              json.dump(facts, f)
      """;

  private static List<String> str(List<?> l) {
    return l.stream().map(String::valueOf).toList();
  }

  private static boolean waitGone(ProcessHandle h) throws Exception {
    try {
      h.onExit().get(5, TimeUnit.SECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    }
  }
}

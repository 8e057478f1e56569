package io.efscsi.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;

/**
 * A QEMU VM (software emulation) that boots the machine's Debian kernel with the machine's own root
 * shared over 9p, so the kernel NFS client, its cgroups and its mount table are real while every
 * binary (Java, ganesha, stunnel, our distribution) is the machine's. A scenario script runs inside
 * as root in a chroot of the shared root; what it writes under the shared root is read here after
 * the VM has powered off. See /work/shared/testing/real-nfs-and-kernel.md, section 4.
 *
 * <p>Needs the Debian packages qemu-system-x86, linux-image-amd64 and busybox-static (scripts/test
 * installs them). Anything missing, a kernel that does not boot or a script that does not finish
 * fails the caller with the console log; nothing is ever skipped.
 */
final class KernelVm {

  /**
   * The modules that bring up virtio and 9p, in the order insmod needs them (no modprobe in the
   * initramfs).
   */
  static final List<String> MODULES =
      List.of(
          "drivers/virtio/virtio_ring",
          "drivers/virtio/virtio",
          "drivers/virtio/virtio_pci_legacy_dev",
          "drivers/virtio/virtio_pci_modern_dev",
          "drivers/virtio/virtio_pci",
          "fs/netfs/netfs",
          "fs/fscache/fscache",
          "net/9p/9pnet",
          "net/9p/9pnet_virtio",
          "fs/9p/9p");

  /**
   * Busybox's /init: load virtio and 9p, mount the machine's root, chroot into it and run the
   * script named on the kernel command line; then flush what was written and power off.
   * cache=loose: the guest caches what it reads (jars, binaries), which makes JVM starts several
   * times faster; the host does not change those files while the VM runs.
   */
  static final String INIT =
      """
      #!/bin/busybox sh
      /bin/busybox --install -s /bin
      export PATH=/bin
      mount -t proc proc /proc
      mount -t sysfs sys /sys
      mount -t devtmpfs dev /dev
      for m in %s; do insmod /modules/$m.ko || echo "EFSVM: insmod $m failed"; done
      if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose hostroot /host; then
        mount -t proc proc /host/proc
        mount -t sysfs sys /host/sys
        mount -o bind /dev /host/dev
        mount -t tmpfs run /host/run
        script=$(sed -n 's/.* efsvm.script=\\([^ ]*\\).*/\\1/p' /proc/cmdline)
        echo "EFSVM: running $script"
        chroot /host /bin/bash "$script"
        echo "EFSVM: script exited $?"
        sync
      else
        echo "EFSVM: cannot mount the host root over 9p"
      fi
      poweroff -f
      """;

  private KernelVm() {}

  /** What one boot left behind. */
  record Run(Path out, Path console, Duration took) {

    /** The {@code key=value} facts a scenario wrote (in order; a repeated key keeps the last). */
    Map<String, String> facts(String scenario) throws IOException {
      Map<String, String> facts = new LinkedHashMap<>();
      Path f = out.resolve(scenario + ".facts");
      if (Files.exists(f)) {
        for (String line : Files.readAllLines(f)) {
          int eq = line.indexOf('=');
          if (eq > 0) {
            facts.put(line.substring(0, eq), line.substring(eq + 1));
          }
        }
      }
      return facts;
    }

    String log(String scenario) {
      return tail(out.resolve(scenario + ".log"), 12_000);
    }
  }

  /** The newest installed Debian kernel that has its modules: its version, e.g. 6.1.0-56-amd64. */
  static String kernelVersion() throws IOException {
    Path boot = Path.of("/boot");
    List<String> versions = new ArrayList<>();
    if (Files.isDirectory(boot)) {
      try (Stream<Path> s = Files.list(boot)) {
        s.map(p -> p.getFileName().toString())
            .filter(n -> n.startsWith("vmlinuz-"))
            .map(n -> n.substring("vmlinuz-".length()))
            .filter(v -> Files.isDirectory(Path.of("/lib/modules", v, "kernel")))
            .forEach(versions::add);
      }
    }
    return versions.stream()
        .max(Comparator.comparing(KernelVm::versionKey))
        .orElseThrow(() ->
            new IllegalStateException(
                "no /boot/vmlinuz-<ver> with /lib/modules/<ver>: install linux-image-amd64"
                    + " (scripts/test does)"));
  }

  private static String versionKey(String v) {
    StringBuilder sb = new StringBuilder();
    for (String part : v.split("[.-]")) {
      sb.append(part.matches("\\d+") ? "%08d".formatted(Long.parseLong(part)) : part).append('.');
    }
    return sb.toString();
  }

  /** Builds (or reuses) the initramfs for {@code version} in {@code dir}. */
  static Path initramfs(Path dir, String version) throws IOException {
    Path busybox = Path.of("/bin/busybox");
    if (!Files.isExecutable(busybox)) {
      throw new IllegalStateException("/bin/busybox is missing: install busybox-static");
    }
    String names =
        String.join(" ", MODULES.stream().map(m -> m.substring(m.lastIndexOf('/') + 1)).toList());
    Files.createDirectories(dir);
    Path out = dir.resolve("initrd-" + version + ".gz");
    Path tmp = dir.resolve("initrd-" + version + ".gz.tmp");
    try (OutputStream os = new GZIPOutputStream(Files.newOutputStream(tmp));
        Cpio cpio = new Cpio(os)) {
      for (String d : List.of("bin", "modules", "host", "proc", "sys", "dev")) {
        cpio.dir(d);
      }
      cpio.file("bin/busybox", Files.readAllBytes(busybox), 0755);
      for (String m : MODULES) {
        Path ko = Path.of("/lib/modules", version, "kernel", m + ".ko");
        if (!Files.exists(ko)) {
          throw new IllegalStateException("kernel module missing: " + ko);
        }
        cpio.file(
            "modules/" + m.substring(m.lastIndexOf('/') + 1) + ".ko", Files.readAllBytes(ko), 0644);
      }
      cpio.file("init", INIT.formatted(names).getBytes(StandardCharsets.UTF_8), 0755);
    }
    Files.move(tmp, out, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    return out;
  }

  /**
   * Boots the VM running {@code script} (a path under the shared root) and waits for it to power
   * off; fails with the console log when QEMU is missing, the VM does not boot, or it runs past
   * {@code timeout}.
   */
  static Run boot(Path workDir, Path script, Path out, Duration timeout) throws Exception {
    String qemu = NfsLab.which("qemu-system-x86_64");
    if (qemu == null) {
      throw new IllegalStateException(
          "qemu-system-x86_64 is not installed: run scripts/test, which installs qemu-system-x86");
    }
    String version = kernelVersion();
    Path initrd = initramfs(workDir, version);
    Path console = out.resolve("console.log");
    Files.createDirectories(out);
    List<String> cmd =
        List.of(
            qemu,
            "-accel",
            "tcg,thread=multi",
            "-smp",
            "2",
            // the emulated CPU with the instructions the JVM and TLS use when a CPU has them
            // (QEMU's default, qemu64, has none past SSE3): AES-NI and carry-less multiply for
            // AES-GCM, SSSE3/SSE4.2/POPCNT for the JVM's string and bit intrinsics. Measured in
            // the VM: AES-128-GCM 67 MB/s instead of 26, java -version 0.94 s instead of 1.07, a
            // small HashMap/String workload 1.86 s instead of 2.25. Not AVX (-cpu max): TCG's
            // AVX is slower here (java -version 1.29 s, process starts 73 ms instead of 46).
            "-cpu",
            "qemu64,+aes,+pclmulqdq,+ssse3,+sse4.1,+sse4.2,+popcnt",
            "-m",
            "3072", // two lanes of scenarios, each with its file servers, plugins and proxies
            "-nographic",
            "-no-reboot",
            "-nic",
            "none",
            "-kernel",
            "/boot/vmlinuz-" + version,
            "-initrd",
            initrd.toString(),
            "-append",
            // no Spectre mitigations in the guest: retpolines cost the emulated CPU (measured: a
            // JVM's -version 1.18-1.21 s with them, 0.86 s without; 300 execs 14.0 s against
            // 13.0 s); the VM runs only the suite's own code, and what it proves (the NFS client,
            // mounts, cgroups) does not depend on them
            "console=ttyS0 quiet panic=-1 mitigations=off efsvm.script=" + script,
            "-virtfs",
            "local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap");
    long t0 = System.nanoTime();
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(console.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    boolean exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    if (!exited) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError(
          "the kernel VM did not power off within "
              + timeout.toSeconds()
              + " s; console:\n"
              + tail(console, 8_000)
              + "\nscenario logs in "
              + out);
    }
    String text = tail(console, 8_000);
    // the whole console: the scenarios' logging (stunnel's, through the VM's console) can push the
    // boot's own line out of any tail
    if (!Files.readString(console, StandardCharsets.ISO_8859_1).contains("EFSVM: running")) {
      throw new AssertionError(
          "the kernel VM did not boot (QEMU exit "
              + p.exitValue()
              + ", "
              + String.join(" ", cmd)
              + "); console:\n"
              + text);
    }
    Optional<String> done =
        Files.exists(out.resolve("done"))
            ? Optional.of(Files.readString(out.resolve("done")).trim())
            : Optional.empty();
    if (!done.equals(Optional.of("ok"))) {
      throw new AssertionError(
          "the scenario script did not finish ("
              + done.orElse("no done file")
              + "); setup facts: "
              + new Run(out, console, took).facts("setup")
              + "\nconsole:\n"
              + text);
    }
    return new Run(out, console, took);
  }

  static String tail(Path file, int chars) {
    try {
      String s = Files.readString(file, StandardCharsets.ISO_8859_1);
      return s.length() > chars ? "…" + s.substring(s.length() - chars) : s;
    } catch (IOException e) {
      return "(no " + file + ")";
    }
  }

  static byte[] resource(String name) throws IOException {
    try (InputStream in = KernelVm.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + name);
      }
      return in.readAllBytes();
    }
  }

  /** A minimal writer of the cpio "newc" format the kernel unpacks an initramfs from. */
  private static final class Cpio implements AutoCloseable {
    private final OutputStream out;
    private long written;
    private int ino = 1;

    Cpio(OutputStream out) {
      this.out = out;
    }

    void dir(String name) throws IOException {
      entry(name, 040755, new byte[0]);
    }

    void file(String name, byte[] data, int mode) throws IOException {
      entry(name, 0100000 | mode, data);
    }

    private void entry(String name, int mode, byte[] data) throws IOException {
      byte[] n = (name + "\0").getBytes(StandardCharsets.US_ASCII);
      ByteArrayOutputStream h = new ByteArrayOutputStream();
      h.writeBytes("070701".getBytes(StandardCharsets.US_ASCII));
      long[] fields = {ino++, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, n.length, 0};
      for (long f : fields) {
        h.writeBytes("%08X".formatted(f).getBytes(StandardCharsets.US_ASCII));
      }
      write(h.toByteArray());
      write(n);
      pad();
      write(data);
      pad();
    }

    private void write(byte[] b) throws IOException {
      out.write(b);
      written += b.length;
    }

    private void pad() throws IOException {
      while (written % 4 != 0) {
        write(new byte[1]);
      }
    }

    @Override
    public void close() throws IOException {
      entry("TRAILER!!!", 0, new byte[0]);
      out.flush();
    }
  }
}

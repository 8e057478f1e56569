package io.efscsi.it;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * The test JVMs the kernel VM starts ({@link CsiClient}, one per lane of scenarios, {@link
 * SupervisorHost} in the supervisor scenarios) start from AOT caches, as the plugin and the proxies
 * start on a node from the caches the build writes ({@code bin/efs-csi train}): made on this
 * machine before the boot, with the JVM options and class path the VM's {@code jvm_start} uses
 * (scenarios.sh), so that the emulated CPU does not load and link their classes cold. An AOT cache
 * takes only jars, so the test classes go into one first.
 */
final class VmTestJvms {

  /**
   * The options of every test JVM in the VM. Like the product's (bin/efs-csi,
   * lib/proxy/jvm.options): no machine code from the cache (adapters made on this CPU die with
   * SIGILL on the VM's emulated one), and JVM warnings to stderr, as stdout carries the JVM's
   * answers.
   */
  static final List<String> OPTIONS =
      List.of(
          "-Xmx128m",
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:+UnlockDiagnosticVMOptions",
          "-XX:-AOTAdapterCaching",
          "-XX:-AOTStubCaching",
          "--enable-native-access=ALL-UNNAMED",
          "-Xlog:disable",
          "-Xlog:all=warning:stderr");

  /** The test classes' jar and the two caches. */
  record Made(Path jar, Path csiClient, Path supervisorHost) {}

  private VmTestJvms() {}

  /** Makes the jar and trains both caches in {@code dir}, for {@code dist}. */
  static Made make(Path dir, Path testClasses, Path dist) throws Exception {
    Path jar = jar(testClasses, dir.resolve("it-classes.jar"));
    String cp = jar + ":" + dist.resolve("lib") + "/*";
    // a CsiClient's start and a call: no plugin answers on this socket, so the probe fails
    // (UNAVAILABLE) after the channel, the stub and the unix-socket transport have loaded
    Path csi =
        train(
            dir,
            "csi-client",
            cp,
            dist,
            "probe\nquit\n",
            "io.efscsi.it.CsiClient",
            dir.resolve("no-plugin.sock").toString());
    // a SupervisorHost's start with its supervisor, status, stats and the node's metrics
    Path state = Files.createDirectories(dir.resolve("training-state"));
    Path host =
        train(
            dir,
            "supervisor-host",
            cp,
            dist,
            "status\nstats\nmetrics\nquit\n",
            "io.efscsi.it.SupervisorHost",
            "--home",
            dist.toString(),
            "--state",
            state.toString(),
            "--mountinfo",
            "self",
            "--ports",
            "20990-20999");
    HostCleanup.deleteTree(state);
    return new Made(jar, csi, host);
  }

  /** The class files under {@code classes} in a jar (in name order, fixed times). */
  static Path jar(Path classes, Path jar) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.walk(classes)) {
      files = s.filter(p -> p.toString().endsWith(".class")).sorted().toList();
    }
    try (OutputStream os = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(os)) {
      for (Path f : files) {
        JarEntry e = new JarEntry(classes.relativize(f).toString().replace('\\', '/'));
        e.setLastModifiedTime(FileTime.fromMillis(0));
        out.putNextEntry(e);
        out.write(Files.readAllBytes(f));
        out.closeEntry();
      }
    }
    return jar;
  }

  private static Path train(
      Path dir, String name, String cp, Path dist, String input, String main, String... args)
      throws Exception {
    Path cache = dir.resolve(name + ".aot");
    Files.deleteIfExists(cache);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(OPTIONS);
    cmd.add("-XX:AOTCacheOutput=" + cache);
    cmd.add("-Djava.library.path=" + dist.resolve("lib/proxy/native"));
    cmd.addAll(List.of("-cp", cp, main));
    cmd.addAll(List.of(args));
    Path log = dir.resolve(name + "-training.log");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(input.getBytes(StandardCharsets.UTF_8));
    }
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          name + "'s AOT training ran past 180 s: " + KernelVm.tail(log, 4000));
    }
    if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
      throw new AssertionError(
          name
              + "'s AOT training wrote no cache (exit "
              + p.exitValue()
              + "): "
              + KernelVm.tail(log, 4000));
    }
    return cache;
  }
}

package io.efscsi.supervisor.process;

import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.host.Children;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Launches {@code io.efscsi.proxy.ProxyMain} with the same Java runtime as this process, the
 * proxy's own classpath ({@code <home>/lib/proxy/*.jar}, sorted, as its AOT cache expects) and its
 * JVM options ({@code <home>/lib/proxy/jvm.options}, shared with {@code bin/efs-csi proxy}), in a
 * new session ({@code setsid}) so that it survives the plugin, with MALLOC_ARENA_MAX=1. The process
 * is spawned and reaped by {@link Children} (one waiter thread for all proxies).
 */
public final class JavaProxyLauncher implements ProxyLauncher {

  public static final String MAIN = "io.efscsi.proxy.ProxyMain";

  /** Tells a proxy its build, which its {@code status} shows. */
  public static final String BUILD_ENV = "EFSCSI_PROXY_BUILD";

  private final String java;
  private final Path home;
  private final String setsid;
  private final List<String> jvmOptions;
  private final String classpath;
  private final Children children;
  private final String build;

  /**
   * @param java the java binary ({@link #currentJava()} in production)
   * @param home the distribution's root (holds lib/proxy)
   * @param setsid the setsid binary
   * @param children spawns and reaps the proxies
   */
  public JavaProxyLauncher(String java, Path home, String setsid, Children children)
      throws IOException {
    this.java = java;
    this.children = children;
    // The real path, as bin/efs-csi's `pwd -P`: the AOT cache matches the classpath string.
    try {
      this.home = home.toRealPath();
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IOException("the distribution home " + home + " does not exist (efscsi.home)", e);
    }
    this.setsid = setsid;
    Path lib = this.home.resolve("lib/proxy");
    if (!Files.isDirectory(lib)) {
      throw new IOException(
          "the proxy's classpath " + lib + " is missing (efscsi.home=" + home + ")");
    }
    this.jvmOptions = readOptions(lib.resolve("jvm.options"), this.home);
    this.classpath = classpath(lib);
    this.build = io.efscsi.supervisor.upgrade.ProxyBuild.of(lib);
  }

  /**
   * The proxy's jars by file name in byte order (as {@code LC_ALL=C sort}), absolute, joined with
   * ':': exactly the classpath the proxy's AOT cache was trained with (bin/efs-csi builds the
   * same), without which the JVM ignores the cache.
   */
  static String classpath(Path lib) throws IOException {
    try (var files = Files.list(lib)) {
      List<String> jars =
          files
              .map(f -> f.getFileName().toString())
              .filter(n -> n.endsWith(".jar"))
              .sorted()
              .map(n -> lib.resolve(n).toAbsolutePath().toString())
              .toList();
      if (jars.isEmpty()) {
        throw new IOException("no jars in the proxy's classpath " + lib);
      }
      return String.join(File.pathSeparator, jars);
    }
  }

  /** The java binary this JVM runs on. */
  public static String currentJava() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** Reads jvm.options: one option per line, '#' comments, ${home} replaced. */
  static List<String> readOptions(Path file, Path home) throws IOException {
    List<String> out = new ArrayList<>();
    if (!Files.exists(file)) {
      return out;
    }
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String l = line.strip();
      if (!l.isEmpty() && !l.startsWith("#")) {
        out.add(l.replace("${home}", home.toString()));
      }
    }
    return out;
  }

  /** The command line (without the cgroup wrapper) for one proxy. */
  public List<String> command(Path configFile) {
    List<String> cmd = new ArrayList<>();
    cmd.add(setsid);
    cmd.add(java);
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(MAIN);
    cmd.add("--config");
    cmd.add(configFile.toString());
    return cmd;
  }

  @Override
  public Started start(Path configFile, Path logFile, Placement placement) throws IOException {
    return spawn(configFile, logFile, placement, OptionalInt.empty());
  }

  @Override
  public Started startOnListener(Path configFile, Path logFile, Placement placement, int listenerFd)
      throws IOException {
    return spawn(configFile, logFile, placement, OptionalInt.of(listenerFd));
  }

  @Override
  public String build() {
    return build;
  }

  private Started spawn(Path configFile, Path logFile, Placement placement, OptionalInt listener)
      throws IOException {
    Map<String, String> env = new HashMap<>(System.getenv());
    env.put("MALLOC_ARENA_MAX", "1");
    env.put(BUILD_ENV, build);
    env.putAll(placement.environment());
    Children.Child p =
        children.spawn(placement.wrap(command(configFile)), home, env, logFile, listener);
    return new Started(p.pid(), Optional.of(p));
  }
}

package io.efscsi.proxy;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyEnv;
import io.efscsi.proxy.tls.TlsContexts;
import io.efscsi.proxy.util.Signals;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.security.Security;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code efs-csi proxy --config <file>}: one per-mount proxy process. Exit codes tell the
 * supervisor what happened: 0 stopped by SIGTERM, drained, or an inherited listener never served
 * (standby ran out), 2 bad command line, 10 the port could not be bound or the inherited listener
 * is unusable (never mount onto it), 11 bad config or environment ({@link ProxyEnv}), 12 unusable
 * TLS material, 13 the port could not listen again after an outage.
 */
public final class ProxyMain {

  public static final int EXIT_USAGE = 2;
  public static final int EXIT_BIND_FAILED = 10;
  public static final int EXIT_CONFIG = 11;
  public static final int EXIT_TLS = 12;

  /** The port stopped listening during an outage and could not listen again: start anew. */
  public static final int EXIT_LISTEN_LOST = 13;

  private static final Logger log = LoggerFactory.getLogger(ProxyMain.class);

  private ProxyMain() {}

  public static void main(String[] args) {
    System.exit(run(List.of(args), System.err, System.getenv()));
  }

  /** The process: {@code env} is its environment (tests pass a map). */
  static int run(List<String> args, PrintStream err, Map<String, String> environment) {
    Path configFile = null;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--config") && i + 1 < args.size()) {
        configFile = Path.of(args.get(++i));
      } else if (a.startsWith("--config=")) {
        configFile = Path.of(a.substring("--config=".length()));
      } else {
        err.println(
            "efs-csi proxy: unexpected argument '" + a + "'; usage: efs-csi proxy --config <file>");
        return EXIT_USAGE;
      }
    }
    if (configFile == null) {
      err.println("efs-csi proxy: usage: efs-csi proxy --config <file>");
      return EXIT_USAGE;
    }
    ProxyConfig config;
    try {
      config = ProxyConfig.load(configFile);
    } catch (IOException | IllegalArgumentException e) {
      err.println("efs-csi proxy: config " + configFile + ": " + e.getMessage());
      return EXIT_CONFIG;
    }
    ProxyEnv env;
    try {
      env = ProxyEnv.fromMap(environment);
    } catch (IllegalArgumentException e) {
      err.println("efs-csi proxy: environment: " + e.getMessage());
      return EXIT_CONFIG;
    }
    // Mount target names are resolved again for every upstream connection; keep the JVM's cache
    // short.
    Security.setProperty("networkaddress.cache.ttl", "5");
    TlsContexts tls = null;
    if (config.tls()) {
      try {
        tls = new TlsContexts(config);
      } catch (IOException e) {
        err.println("efs-csi proxy: " + e.getMessage());
        return EXIT_TLS;
      }
    }
    CountDownLatch stop = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<ProxyServer.Stop> why =
        new java.util.concurrent.atomic.AtomicReference<>();
    ProxyServer server;
    try {
      server =
          ProxyServer.start(
              config,
              env,
              tls,
              reason -> {
                why.compareAndSet(null, reason);
                stop.countDown();
              });
    } catch (ProxyServer.BindFailedException e) {
      err.println("efs-csi proxy: " + e.getMessage());
      return EXIT_BIND_FAILED;
    } catch (IOException e) {
      err.println("efs-csi proxy: " + e.getMessage());
      return EXIT_CONFIG;
    }
    log.info(
        "proxy {} 127.0.0.1:{} for {}:{} (tls {}, bind {})",
        env.listenFd().isPresent()
            ? "in standby until serve (at most "
                + env.standbyTimeout().toMillis()
                + " ms) on inherited listener fd "
                + env.listenFd().getAsInt()
                + ","
            : "listening on",
        config.listenPort(),
        config.upstreamHost(),
        config.upstreamPort(),
        tls == null ? "off" : tls.provider(),
        config.bind());
    if (!ProxyServer.unzeroedDirectBuffers()) {
      log.warn(
          "read buffers come from ByteBuffer.allocateDirect and are zeroed on every read (more CPU"
              + " per byte): run the proxy with the options of lib/proxy/jvm.options");
    }
    Signals.onTermination(s -> stop.countDown());
    if (tls != null) {
      TlsContexts t = tls;
      Signals.on(s -> server.group().execute(() -> count(server, t.reload())), "HUP");
      server
          .group()
          .scheduleWithFixedDelay(() -> count(server, t.reloadIfChanged()), 2, 2, TimeUnit.SECONDS);
    }
    try {
      stop.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server.close();
    return exitCode(why.get());
  }

  /** The exit code for a server that asked to stop ({@code null}: stopped by a signal). */
  static int exitCode(ProxyServer.Stop why) {
    if (why == null) {
      return 0;
    }
    return switch (why) {
      case LISTEN_LOST -> EXIT_LISTEN_LOST;
      case DRAINED, STANDBY_EXPIRED -> 0;
    };
  }

  private static void count(ProxyServer server, boolean reloaded) {
    if (reloaded) {
      server.metrics().tlsReloads.increment();
    }
  }
}

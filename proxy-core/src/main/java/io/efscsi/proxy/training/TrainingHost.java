package io.efscsi.proxy.training;

import io.efscsi.proxy.ProxyMain;
import io.efscsi.proxy.ProxyServer;
import io.efscsi.proxy.config.ProxyConfig;
import java.nio.file.Path;

/**
 * Build time only: the JVM {@code bin/efs-csi train} records for the proxy's AOT cache. It is a
 * proxy process as the supervisor starts one ({@link ProxyMain} on a configuration file, TLS), with
 * a plain proxy beside it in the same JVM, so the cache holds both modes' classes. {@link
 * ProxyTraining}, in another JVM, drives both and ends this one: the TLS proxy's {@code drain}
 * stops it, and ProxyMain exits the JVM, which writes the AOT configuration as it exits.
 *
 * <p>Usage: {@code TrainingHost <plain config> <tls config>}.
 */
public final class TrainingHost {

  private TrainingHost() {}

  public static void main(String[] args) throws Exception {
    try (ProxyServer plain = ProxyServer.start(ProxyConfig.load(Path.of(args[0])), null)) {
      ProxyMain.main(new String[] {"--config", args[1]}); // exits the JVM when the proxy stops
    }
  }
}

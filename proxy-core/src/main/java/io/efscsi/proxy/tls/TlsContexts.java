package io.efscsi.proxy.tls;

import io.efscsi.proxy.config.ProxyConfig;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one client {@link SslContext} of a proxy: TLS 1.3 and 1.2, BoringSSL when available (JDK
 * otherwise), trust anchors from the CA file or the bundled Amazon Root CA 1-4, and the optional
 * client certificate. {@link #reloadIfChanged()} rebuilds it when a file changed; connections that
 * are already up keep theirs, new ones use the new one.
 */
public final class TlsContexts {

  private static final Logger log = LoggerFactory.getLogger(TlsContexts.class);
  private static final String BUNDLED_CA = "/io/efscsi/proxy/amazon-root-cas.pem";

  private final ProxyConfig config;
  private volatile SslContext current;
  private volatile List<FileTime> stamps;

  public TlsContexts(ProxyConfig config) throws IOException {
    this.config = config;
    this.stamps = stamps();
    this.current = build();
  }

  public SslContext current() {
    return current;
  }

  public String provider() {
    return OpenSsl.isAvailable() ? OpenSsl.versionString() : "JDK";
  }

  /** Rebuilds the context when the CA, certificate or key file changed; true when it did. */
  public synchronized boolean reloadIfChanged() {
    List<FileTime> now;
    try {
      now = stamps();
    } catch (IOException e) {
      log.warn("cannot check TLS files for changes: {}", e.toString());
      return false;
    }
    if (now.equals(stamps)) {
      return false;
    }
    return reload(now);
  }

  /** Rebuilds the context unconditionally (SIGHUP). */
  public synchronized boolean reload() {
    try {
      return reload(stamps());
    } catch (IOException e) {
      log.error("TLS reload failed, keeping the previous certificates: {}", e.toString());
      return false;
    }
  }

  private boolean reload(List<FileTime> now) {
    try {
      current = build();
      stamps = now;
      log.info("TLS material reloaded; new connections use it");
      return true;
    } catch (IOException e) {
      log.error("TLS reload failed, keeping the previous certificates: {}", e.toString());
      return false;
    }
  }

  private List<FileTime> stamps() throws IOException {
    List<FileTime> out = new ArrayList<>();
    for (Optional<Path> p : List.of(config.caFile(), config.certFile(), config.keyFile())) {
      out.add(p.isPresent() ? Files.getLastModifiedTime(p.get()) : FileTime.fromMillis(0));
    }
    return out;
  }

  private SslContext build() throws IOException {
    SslContextBuilder b =
        SslContextBuilder.forClient()
            .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
            .protocols("TLSv1.3", "TLSv1.2")
            .endpointIdentificationAlgorithm(config.verifyHostname() ? "HTTPS" : null);
    if (config.caFile().isPresent()) {
      try (InputStream in = Files.newInputStream(config.caFile().get())) {
        b.trustManager(in);
      }
    } else {
      try (InputStream in = TlsContexts.class.getResourceAsStream(BUNDLED_CA)) {
        if (in == null) {
          throw new IOException("bundled CA " + BUNDLED_CA + " is missing from the classpath");
        }
        b.trustManager(in);
      }
    }
    if (config.certFile().isPresent()) {
      try (InputStream cert = Files.newInputStream(config.certFile().get());
          InputStream key = Files.newInputStream(config.keyFile().orElseThrow())) {
        b.keyManager(cert, key);
      }
    }
    try {
      return b.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IOException("cannot build the TLS context: " + e.getMessage(), e);
    }
  }
}

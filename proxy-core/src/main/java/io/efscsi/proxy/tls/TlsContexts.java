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
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
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

  /** PKIX over the CA file's certificates (or the bundled ones), then the server name check. */
  private ServerNameTrustManager trustManager() throws IOException {
    List<X509Certificate> anchors = new ArrayList<>();
    try (InputStream in =
        config.caFile().isPresent()
            ? Files.newInputStream(config.caFile().get())
            : TlsContexts.class.getResourceAsStream(BUNDLED_CA)) {
      if (in == null) {
        throw new IOException("bundled CA " + BUNDLED_CA + " is missing from the classpath");
      }
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        anchors.add((X509Certificate) c);
      }
    } catch (CertificateException e) {
      // never the JDK's message or cause: it can quote the file's lines (a PEM header or footer),
      // and tls.ca-file may name any file (efs-utils' cafile=)
      throw new IOException(
          "cannot read the CA certificates in "
              + config.caFile().map(Path::toString).orElse(BUNDLED_CA)
              + ": not X.509 certificates in PEM or DER form");
    }
    if (anchors.isEmpty()) {
      throw new IOException(
          "no CA certificate in " + config.caFile().map(Path::toString).orElse(BUNDLED_CA));
    }
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      for (int i = 0; i < anchors.size(); i++) {
        store.setCertificateEntry("ca" + i, anchors.get(i));
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      for (TrustManager tm : tmf.getTrustManagers()) {
        if (tm instanceof X509ExtendedTrustManager x) {
          return new ServerNameTrustManager(
              x, config.verifyHostname() ? config.serverName() : null);
        }
      }
      throw new IOException("no X.509 trust manager in " + tmf.getProvider());
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot set up the CA certificates: " + e.getMessage(), e);
    }
  }

  private SslContext build() throws IOException {
    SslContextBuilder b =
        SslContextBuilder.forClient()
            .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
            .protocols("TLSv1.3", "TLSv1.2")
            // the name is checked by ServerNameTrustManager, not by the JDK (see there why)
            .endpointIdentificationAlgorithm(null)
            .trustManager(trustManager());
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

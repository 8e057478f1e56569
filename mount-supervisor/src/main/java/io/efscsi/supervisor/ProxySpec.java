package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a proxy forwards to and how, as the node asks for it. The supervisor adds what is its own:
 * the loopback port it allocates (or takes over) and the control socket in its state dir; what
 * neither says (buffers, keepalive, bind timeout) is the proxy's default. The canonical constructor
 * is written out (not compact) so that it checks the whole spec, as the proxy will, once its fields
 * are set.
 *
 * @param upstreamHost DNS name or IP of the mount target
 * @param upstreamPort 2049 for EFS
 * @param tls encryption in transit
 * @param serverName the name sent as SNI and checked against the server certificate (blank: the
 *     upstream host)
 * @param verifyHostname whether the certificate must match {@code serverName}
 * @param caFile trust anchors; empty = the bundled Amazon roots
 * @param clientCertificate the certificate the proxy presents (IAM, access point)
 * @param bind the BindClientToPartition flavour spoken first on every upstream connection
 */
public record ProxySpec(
    String upstreamHost,
    int upstreamPort,
    boolean tls,
    String serverName,
    boolean verifyHostname,
    Optional<Path> caFile,
    Optional<ClientCertificate> clientCertificate,
    BindProtocol bind) {

  /** A client certificate and its private key, PEM files the proxy reads (and rereads). */
  public record ClientCertificate(Path certificate, Path privateKey) {}

  /** Refuses what the proxy would refuse, naming the key and the value. */
  public ProxySpec(
      String upstreamHost,
      int upstreamPort,
      boolean tls,
      String serverName,
      boolean verifyHostname,
      Optional<Path> caFile,
      Optional<ClientCertificate> clientCertificate,
      BindProtocol bind) {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
    this.tls = tls;
    this.serverName = serverName == null || serverName.isBlank() ? upstreamHost : serverName;
    this.verifyHostname = verifyHostname;
    this.caFile = Objects.requireNonNull(caFile, "caFile");
    this.clientCertificate = Objects.requireNonNull(clientCertificate, "clientCertificate");
    this.bind = Objects.requireNonNull(bind, "bind");
    config(1, Optional.empty());
  }

  /** A plain TCP tunnel to {@code host:port}: no TLS, no binding. */
  public static ProxySpec plain(String host, int port) {
    return new ProxySpec(
        host, port, false, host, false, Optional.empty(), Optional.empty(), BindProtocol.NONE);
  }

  /**
   * The spec of a proxy configuration (its port and control socket dropped): a test driver's
   * key=value words.
   */
  public static ProxySpec of(ProxyConfig c) {
    return new ProxySpec(
        c.upstreamHost(),
        c.upstreamPort(),
        c.tls(),
        c.serverName(),
        c.verifyHostname(),
        c.caFile(),
        c.certFile().map(cert -> new ClientCertificate(cert, c.keyFile().orElseThrow())),
        c.bind());
  }

  /** The same with {@code certificate} and its {@code privateKey} presented. */
  public ProxySpec withClientCertificate(Path certificate, Path privateKey) {
    return new ProxySpec(
        upstreamHost,
        upstreamPort,
        tls,
        serverName,
        verifyHostname,
        caFile,
        Optional.of(new ClientCertificate(certificate, privateKey)),
        bind);
  }

  /** The proxy's whole configuration on {@code port} with its control socket. */
  ProxyConfig config(int port, Path controlSocket) {
    return config(port, Optional.of(controlSocket));
  }

  private ProxyConfig config(int port, Optional<Path> controlSocket) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(Keys.LISTEN_PORT, Integer.toString(port));
    m.put(Keys.UPSTREAM_HOST, upstreamHost == null ? "" : upstreamHost);
    m.put(Keys.UPSTREAM_PORT, Integer.toString(upstreamPort));
    m.put(Keys.TLS, Boolean.toString(tls));
    if (serverName != null) {
      m.put(Keys.SERVER_NAME, serverName);
    }
    m.put(Keys.VERIFY_HOSTNAME, Boolean.toString(verifyHostname));
    caFile.ifPresent(ca -> m.put(Keys.CA_FILE, ca.toString()));
    clientCertificate.ifPresent(c -> {
      m.put(Keys.CERT_FILE, c.certificate().toString());
      m.put(Keys.KEY_FILE, c.privateKey().toString());
    });
    m.put(Keys.BIND, bind.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    controlSocket.ifPresent(c -> m.put(Keys.CONTROL_SOCKET, c.toString()));
    return ProxyConfig.fromMap(m);
  }
}

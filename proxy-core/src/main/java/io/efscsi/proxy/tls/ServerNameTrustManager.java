package io.efscsi.proxy.tls;

import java.net.InetAddress;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.security.auth.x500.X500Principal;

/**
 * The JDK's PKIX trust manager for the chain (trust anchors, validity, constraints, disabled
 * algorithms), then our own check that the server certificate names the file system.
 *
 * <p>Why not the JDK's endpoint identification ("HTTPS")? To decide whether a wildcard may match
 * below a public suffix, it asks whether the chain ends in one of the JDK's own root CAs, and that
 * question loads and parses all ~150 certificates of the JDK's {@code cacerts} into the heap (1.5
 * MiB of a proxy's private memory), although this proxy trusts only the Amazon roots or its CA
 * file. The check here follows RFC 6125 as the JDK and efs-proxy's s2n do: DNS names from the
 * subject alternative names, or the most specific common name when there are none; a wildcard only
 * as the whole leftmost label and never over fewer than two labels ({@code *.com} matches nothing),
 * matching exactly one label; an IP address only against IP address entries.
 */
final class ServerNameTrustManager extends X509ExtendedTrustManager {

  private static final int SAN_DNS = 2;
  private static final int SAN_IP = 7;

  private final X509ExtendedTrustManager chain;
  private final String serverName;

  /**
   * @param chain validates the chain; must not do endpoint identification itself
   * @param serverName the name the certificate must carry, or null to check the chain only
   */
  ServerNameTrustManager(X509ExtendedTrustManager chain, String serverName) {
    this.chain = chain;
    this.serverName = serverName;
  }

  @Override
  public void checkServerTrusted(X509Certificate[] certs, String authType, SSLEngine engine)
      throws CertificateException {
    chain.checkServerTrusted(certs, authType, engine);
    checkName(certs);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] certs, String authType, Socket socket)
      throws CertificateException {
    chain.checkServerTrusted(certs, authType, socket);
    checkName(certs);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] certs, String authType)
      throws CertificateException {
    chain.checkServerTrusted(certs, authType);
    checkName(certs);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] certs, String authType, SSLEngine engine)
      throws CertificateException {
    throw new CertificateException("a client proxy does not accept client certificates");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] certs, String authType, Socket socket)
      throws CertificateException {
    throw new CertificateException("a client proxy does not accept client certificates");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] certs, String authType)
      throws CertificateException {
    throw new CertificateException("a client proxy does not accept client certificates");
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return chain.getAcceptedIssuers();
  }

  private void checkName(X509Certificate[] certs) throws CertificateException {
    if (serverName != null && !names(certs[0], serverName)) {
      throw new CertificateException(
          "the server certificate ("
              + certs[0].getSubjectX500Principal().getName()
              + ") is not for "
              + serverName);
    }
  }

  /** True when {@code cert} is a certificate for {@code name} (a DNS name or an IP address). */
  static boolean names(X509Certificate cert, String name) throws CertificateParsingException {
    Collection<List<?>> sans = cert.getSubjectAlternativeNames();
    InetAddress ip = ipLiteral(name);
    if (ip != null) {
      for (List<?> san : sans == null ? List.<List<?>>of() : sans) {
        if (((Integer) san.get(0)) == SAN_IP && ip.equals(ipLiteral((String) san.get(1)))) {
          return true;
        }
      }
      return false;
    }
    String host = normalize(name);
    if (host.isEmpty()) {
      return false;
    }
    List<String> dnsNames = new ArrayList<>();
    for (List<?> san : sans == null ? List.<List<?>>of() : sans) {
      if (((Integer) san.get(0)) == SAN_DNS) {
        dnsNames.add((String) san.get(1));
      }
    }
    if (dnsNames.isEmpty()) {
      String cn = mostSpecificCommonName(cert.getSubjectX500Principal());
      if (cn != null) {
        dnsNames.add(cn);
      }
    }
    for (String pattern : dnsNames) {
      if (matches(normalize(pattern), host)) {
        return true;
      }
    }
    return false;
  }

  /** {@code pattern} and {@code host} lower case without a trailing dot. */
  static boolean matches(String pattern, String host) {
    if (pattern.isEmpty()) {
      return false;
    }
    if (pattern.indexOf('*') < 0) {
      return pattern.equals(host);
    }
    if (!pattern.startsWith("*.") || pattern.indexOf('*', 1) >= 0) {
      return false; // partial-label and inner wildcards are not accepted
    }
    String suffix = pattern.substring(1); // ".a.b"
    if (suffix.indexOf('.', 1) < 0 || suffix.contains("..")) {
      return false; // *.com or *. : a wildcard over fewer than two labels
    }
    int dot = host.indexOf('.');
    return dot > 0 && host.substring(dot).equals(suffix);
  }

  private static String normalize(String name) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    return n.endsWith(".") ? n.substring(0, n.length() - 1) : n;
  }

  /**
   * The first CN of the RFC 2253 form (which lists the most specific RDN first), or null; an empty
   * string (which matches nothing) when it is not a plain string.
   */
  static String mostSpecificCommonName(X500Principal subject) {
    String dn = subject.getName(X500Principal.RFC2253);
    int i = 0;
    while (i < dn.length()) {
      StringBuilder type = new StringBuilder();
      while (i < dn.length() && dn.charAt(i) != '=') {
        type.append(dn.charAt(i++));
      }
      i++; // '='
      StringBuilder value = new StringBuilder();
      // hex values (#...) are not strings; escaped characters (\\, \\2C, ...) never occur in a
      // DNS name: either makes the value one that matches nothing
      boolean name = i >= dn.length() || dn.charAt(i) != '#';
      while (i < dn.length() && dn.charAt(i) != ',' && dn.charAt(i) != '+') {
        char c = dn.charAt(i++);
        if (c == '\\') {
          name = false;
          i++;
        }
        value.append(c);
      }
      i++; // ',' or '+'
      if (type.toString().trim().equalsIgnoreCase("CN")) {
        return name ? value.toString() : "";
      }
    }
    return null;
  }

  /** The address when {@code s} is an IPv4 or IPv6 literal, else null (never a DNS lookup). */
  private static InetAddress ipLiteral(String s) {
    String t = s.trim();
    if (t.startsWith("[") && t.endsWith("]")) {
      t = t.substring(1, t.length() - 1);
    }
    if (!t.matches("\\d{1,3}(\\.\\d{1,3}){3}") && t.indexOf(':') < 0) {
      return null;
    }
    try {
      return InetAddress.ofLiteral(t);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}

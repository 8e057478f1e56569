package io.efscsi.common.grpc;

import java.nio.file.Path;

/**
 * Where a CSI gRPC server listens: a unix domain socket or a TCP address.
 *
 * <p>Accepted forms, as kubelet, the CSI sidecars and the Go driver's manifests write them: {@code
 * unix:///abs/path.sock}, {@code unix:/abs/path.sock}, {@code unix://relative/path.sock} (the Go
 * driver's default {@code unix://tmp/csi.sock}, read as {@code /tmp/csi.sock}), and {@code
 * tcp://host:port}.
 */
public sealed interface Endpoint {

  /** A unix domain socket at an absolute path. */
  record Unix(Path path) implements Endpoint {
    public Unix {
      if (!path.isAbsolute()) {
        throw new IllegalArgumentException("unix socket path must be absolute: " + path);
      }
    }

    @Override
    public String toString() {
      return "unix://" + path;
    }
  }

  /** A TCP listen address; host may be empty for all interfaces. */
  record Tcp(String host, int port) implements Endpoint {
    public Tcp {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("tcp port out of range 0-65535: " + port);
      }
    }

    @Override
    public String toString() {
      return "tcp://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
  }

  /**
   * Parses an endpoint string.
   *
   * @throws IllegalArgumentException naming the value and the accepted forms
   */
  static Endpoint parse(String value) {
    if (value == null || value.isBlank()) {
      throw invalid(value, "it is empty");
    }
    String v = value.strip();
    int colon = v.indexOf(':');
    if (colon < 0) {
      throw invalid(value, "it has no scheme");
    }
    String scheme = v.substring(0, colon).toLowerCase(java.util.Locale.ROOT);
    String rest = v.substring(colon + 1);
    return switch (scheme) {
      case "unix" -> parseUnix(value, rest);
      case "tcp" -> parseTcp(value, rest);
      default -> throw invalid(value, "scheme '" + scheme + "' is not supported");
    };
  }

  private static Endpoint parseUnix(String original, String rest) {
    String path;
    if (rest.startsWith("//")) {
      // unix:///abs -> /abs ; unix://rel/x -> /rel/x (Go driver semantics: host part joins path)
      path = rest.substring(2);
      if (!path.startsWith("/")) {
        path = "/" + path;
      }
    } else {
      path = rest;
    }
    if (path.isEmpty() || path.equals("/")) {
      throw invalid(original, "it names no socket file");
    }
    if (!path.startsWith("/")) {
      throw invalid(original, "the socket path must be absolute");
    }
    if (path.endsWith("/")) {
      throw invalid(original, "the socket path names a directory");
    }
    return new Unix(Path.of(path).normalize());
  }

  private static Endpoint parseTcp(String original, String rest) {
    if (!rest.startsWith("//")) {
      throw invalid(original, "tcp endpoints are written tcp://host:port");
    }
    String authority = rest.substring(2);
    if (authority.contains("/") || authority.contains("?")) {
      throw invalid(original, "a tcp endpoint takes no path or query");
    }
    int sep = authority.lastIndexOf(':');
    if (sep < 0 || sep == authority.length() - 1) {
      throw invalid(original, "it has no port");
    }
    String host = authority.substring(0, sep);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.contains(":")) {
      throw invalid(original, "an IPv6 host must be written in brackets");
    }
    int port;
    try {
      port = Integer.parseInt(authority.substring(sep + 1));
    } catch (NumberFormatException e) {
      throw invalid(original, "the port is not a number");
    }
    if (port < 0 || port > 65535) {
      throw invalid(original, "the port is out of range 0-65535");
    }
    return new Tcp(host, port);
  }

  private static IllegalArgumentException invalid(String value, String why) {
    return new IllegalArgumentException(
        "invalid endpoint '"
            + value
            + "': "
            + why
            + " (accepted: unix:///path/to/csi.sock, unix:/path/to/csi.sock, tcp://host:port)");
  }
}

package io.efscsi.common.config;

/** A listen address written {@code host:port}, {@code :port} or {@code [v6]:port}. */
public record HostPort(String host, int port) {

  public HostPort {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is out of range 0-65535");
    }
  }

  public static HostPort parse(String text) {
    int sep = text.lastIndexOf(':');
    if (sep < 0) {
      throw new IllegalArgumentException(
          "'" + text + "' is not an address: expected host:port or :port");
    }
    String host = text.substring(0, sep);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.contains(":")) {
      throw new IllegalArgumentException("'" + text + "': write IPv6 hosts as [addr]:port");
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(sep + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + text + "': the port is not a number");
    }
    return new HostPort(host, port);
  }
}

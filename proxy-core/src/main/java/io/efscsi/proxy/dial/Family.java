package io.efscsi.proxy.dial;

import java.net.Inet6Address;
import java.net.InetAddress;

/** An address family, as Happy Eyeballs orders and remembers it. */
public enum Family {
  IPV6("IPv6"),
  IPV4("IPv4");

  private final String label;

  Family(String label) {
    this.label = label;
  }

  public static Family of(InetAddress a) {
    return a instanceof Inet6Address ? IPV6 : IPV4;
  }

  public Family other() {
    return this == IPV6 ? IPV4 : IPV6;
  }

  @Override
  public String toString() {
    return label;
  }
}

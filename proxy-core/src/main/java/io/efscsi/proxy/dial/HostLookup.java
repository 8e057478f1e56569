package io.efscsi.proxy.dial;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Port: the addresses of a DNS name, both families. The real adapter is {@link #SYSTEM}; tests give
 * a name the addresses they need.
 */
@FunctionalInterface
public interface HostLookup {

  /**
   * The JDK's resolver: one {@code getaddrinfo} for both families (glibc sends the A and AAAA
   * queries together and returns when both are answered), in the JDK's order.
   */
  HostLookup SYSTEM = host -> List.of(InetAddress.getAllByName(host));

  /** Never empty; a name that does not resolve throws. */
  List<InetAddress> resolve(String host) throws UnknownHostException;
}

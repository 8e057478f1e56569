package io.efscsi.node.volume;

import java.net.InetAddress;
import java.util.List;

/** Port: resolves a DNS name (the real adapter is {@link InetAddressHostResolver}). */
public interface HostResolver {

  /** The addresses of {@code host}; empty when it does not resolve (in time). */
  List<InetAddress> resolve(String host);
}

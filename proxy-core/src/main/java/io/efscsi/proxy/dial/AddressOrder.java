package io.efscsi.proxy.dial;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The order of connection attempts (RFC 8305 section 4): the first address of the preferred family,
 * then one of the other family, and so on alternating; within a family the resolver's order;
 * duplicates dropped. When the preferred family has no address the other's come in their order.
 */
public final class AddressOrder {

  private AddressOrder() {}

  public static List<InetAddress> interleave(List<InetAddress> resolved, Family preferred) {
    Deque<InetAddress> first = new ArrayDeque<>();
    Deque<InetAddress> second = new ArrayDeque<>();
    for (InetAddress a : new LinkedHashSet<>(resolved)) {
      (Family.of(a) == preferred ? first : second).add(a);
    }
    List<InetAddress> out = new ArrayList<>(first.size() + second.size());
    while (!first.isEmpty() || !second.isEmpty()) {
      if (!first.isEmpty()) {
        out.add(first.poll());
      }
      if (!second.isEmpty()) {
        out.add(second.poll());
      }
    }
    return out;
  }
}

package io.efscsi.proxy.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class AddressOrderTest {

  static List<InetAddress> ips(String... literals) {
    return Arrays.stream(literals).map(InetAddress::ofLiteral).toList();
  }

  @Test
  void familiesAlternateStartingWithThePreferredOne() {
    List<InetAddress> resolved = ips("10.0.0.1", "10.0.0.2", "fd00::1", "fd00::2", "10.0.0.3");
    assertEquals(
        ips("fd00::1", "10.0.0.1", "fd00::2", "10.0.0.2", "10.0.0.3"),
        AddressOrder.interleave(resolved, Family.IPV6));
    assertEquals(
        ips("10.0.0.1", "fd00::1", "10.0.0.2", "fd00::2", "10.0.0.3"),
        AddressOrder.interleave(resolved, Family.IPV4));
  }

  @Test
  void oneFamilyKeepsTheResolversOrder() {
    assertEquals(
        ips("10.0.0.2", "10.0.0.1"),
        AddressOrder.interleave(ips("10.0.0.2", "10.0.0.1"), Family.IPV6));
    assertEquals(
        ips("fd00::9", "fd00::1"), AddressOrder.interleave(ips("fd00::9", "fd00::1"), Family.IPV4));
  }

  @Test
  void duplicatesAreTriedOnce() {
    assertEquals(
        ips("fd00::1", "10.0.0.1"),
        AddressOrder.interleave(ips("10.0.0.1", "fd00::1", "10.0.0.1", "fd00::1"), Family.IPV6));
  }

  @Test
  void nothingResolvedIsNothingToTry() {
    assertEquals(List.of(), AddressOrder.interleave(List.of(), Family.IPV6));
  }

  @Test
  void anIpv4MappedIpv6AddressIsIpv4() {
    // the JDK turns ::ffff:a.b.c.d into an Inet4Address: it is an IPv4 destination
    assertEquals(Family.IPV4, Family.of(InetAddress.ofLiteral("::ffff:10.0.0.1")));
    assertEquals(Family.IPV6, Family.of(InetAddress.ofLiteral("::1")));
  }

  @Test
  void literalsAreAddressesAndNamesAreNot() {
    assertEquals(InetAddress.ofLiteral("10.0.0.5"), Dialer.literal("10.0.0.5").orElseThrow());
    assertEquals(InetAddress.ofLiteral("fd00::5"), Dialer.literal("fd00::5").orElseThrow());
    assertEquals(InetAddress.ofLiteral("fd00::5"), Dialer.literal("[fd00::5]").orElseThrow());
    assertEquals(
        List.of(), Dialer.literal("fs-0123abcd.efs.us-east-1.amazonaws.com").stream().toList());
    assertEquals(
        List.of(), Dialer.literal("us-east-1a.fs-1.efs.us-east-1.amazonaws.com").stream().toList());
    assertEquals(List.of(), Dialer.literal("10.0.0.256").stream().toList());
  }
}

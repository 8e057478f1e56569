package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class InetAddressHostResolverTest {

  @Test
  void ipLiteralsResolveWithoutDns() {
    assertEquals(
        List.of(InetAddress.ofLiteral("127.0.0.1")),
        new InetAddressHostResolver(Duration.ofSeconds(1)).resolve("127.0.0.1"));
  }

  @Test
  void unknownNameIsRetriedWithATrailingDotThenEmpty() {
    List<String> asked = new CopyOnWriteArrayList<>();
    InetAddressHostResolver r =
        new InetAddressHostResolver(
            Duration.ofSeconds(1),
            host -> {
              asked.add(host);
              if (host.endsWith(".")) {
                return new InetAddress[] {InetAddress.ofLiteral("10.0.0.1")};
              }
              throw new UnknownHostException(host);
            });
    assertEquals(List.of(InetAddress.ofLiteral("10.0.0.1")), r.resolve("fs-abcd1234.efs"));
    assertEquals(List.of("fs-abcd1234.efs", "fs-abcd1234.efs."), asked);
    asked.clear();
    InetAddressHostResolver none =
        new InetAddressHostResolver(
            Duration.ofSeconds(1),
            host -> {
              asked.add(host);
              throw new UnknownHostException(host);
            });
    assertEquals(List.of(), none.resolve("x."));
    assertEquals(List.of("x."), asked);
  }

  @Test
  void aHangingLookupIsAbandonedAfterTheTimeout() {
    InetAddressHostResolver r =
        new InetAddressHostResolver(
            Duration.ofMillis(100),
            host -> {
              try {
                Thread.sleep(10_000);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return new InetAddress[] {InetAddress.ofLiteral("10.0.0.1")};
            });
    long start = System.nanoTime();
    assertEquals(List.of(), r.resolve("slow.example"));
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertTrue(ms < 2_000, "took " + ms + " ms");
  }
}

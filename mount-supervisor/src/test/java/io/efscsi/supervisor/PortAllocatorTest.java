package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PortAllocatorTest {

  @Test
  void skipsHeldMountedAndBusyPorts() throws Exception {
    Set<Integer> busy = Set.of(20051);
    PortAllocator a = new PortAllocator(20049, 20053, p -> !busy.contains(p));
    a.hold(20049);
    assertEquals(20052, a.allocate(Set.of(20050)));
    assertEquals(20053, a.allocate(Set.of(20050)));
    PortAllocator.NoFreePortException e =
        assertThrows(PortAllocator.NoFreePortException.class, () -> a.allocate(Set.of(20050)));
    assertEquals(
        "no free proxy port in 20049-20053: 3 held by proxies, 1 carried by loopback NFS mounts,"
            + " 1 in use by other listeners",
        e.getMessage());
  }

  /**
   * The census the port metrics report counts the range by the allocator's rules: its "free" is
   * what allocate hands out, down to zero exactly when allocate refuses (ports of a Go-driver mount
   * left alone, or of another listener, are not free).
   */
  @Test
  void theCensusCountsWhatTheAllocatorWouldHandOut() throws Exception {
    Set<Integer> busy = Set.of(20051);
    Set<Integer> mounted = Set.of(20050);
    PortAllocator a = new PortAllocator(20049, 20053, p -> !busy.contains(p));
    a.hold(20049);
    assertEquals(new PortAllocator.Census(5, 1, 1, 1, 2), a.census(mounted));
    a.allocate(mounted);
    assertEquals(new PortAllocator.Census(5, 2, 1, 1, 1), a.census(mounted));
    a.allocate(mounted);
    assertEquals(0, a.census(mounted).free());
    assertThrows(PortAllocator.NoFreePortException.class, () -> a.allocate(mounted));
    // a held port that a mount also carries is counted once, as held
    assertEquals(new PortAllocator.Census(5, 3, 1, 1, 0), a.census(Set.of(20049, 20050)));
  }

  @Test
  void aReleasedPortIsTheLastToBeReused() throws Exception {
    PortAllocator a = new PortAllocator(20049, 20051, p -> true);
    int first = a.allocate(Set.of());
    a.release(first);
    assertEquals(20050, a.allocate(Set.of()));
    assertEquals(20051, a.allocate(Set.of()));
    assertEquals(first, a.allocate(Set.of()));
  }

  @Test
  void theRealProbeSeesAListener() throws Exception {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      assertFalse(PortAllocator.loopbackBindable(s.getLocalPort()));
    }
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int free = s.getLocalPort();
      s.close();
      assertTrue(PortAllocator.loopbackBindable(free));
    }
  }

  @Test
  void refusesABadRange() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new PortAllocator(21049, 20049, p -> true));
    assertEquals(
        "proxy port range must be 1-65535 with lower <= upper, got 21049-20049", e.getMessage());
  }
}

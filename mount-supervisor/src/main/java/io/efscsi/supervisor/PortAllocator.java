package io.efscsi.supervisor;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Hands out 127.0.0.1 ports for proxies. A port is free only when (1) no proxy of ours holds it
 * (state records are held from adoption on), (2) no loopback NFS mount in the mount table carries
 * it ({@code addr=127.0.0.1,port=P}; an orphaned mount on a reused port is how the Go driver froze
 * kubelet) and (3) a bind probe succeeds. Allocation rotates through the range, so a port just
 * released is the last to be reused.
 */
public final class PortAllocator {

  /** Whether something else listens on a port. */
  public interface BindProbe {
    boolean canBind(int port);
  }

  /** Thrown when no port of the range is free. */
  public static final class NoFreePortException extends IOException {
    private static final long serialVersionUID = 1L;

    NoFreePortException(String message) {
      super(message);
    }
  }

  private final int lower;
  private final int upper;
  private final BindProbe probe;
  private final Set<Integer> held = new HashSet<>();
  private int next;

  public PortAllocator(int lower, int upper, BindProbe probe) {
    if (lower < 1 || upper > 65535 || lower > upper) {
      throw new IllegalArgumentException(
          "proxy port range must be 1-65535 with lower <= upper, got " + lower + "-" + upper);
    }
    this.lower = lower;
    this.upper = upper;
    this.probe = probe;
    this.next = lower;
  }

  /** The real probe: binding 127.0.0.1:port (SO_REUSEADDR as the proxy does) and closing. */
  public static boolean loopbackBindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  public boolean inRange(int port) {
    return port >= lower && port <= upper;
  }

  /** What a port of the range is to the allocator, by its rules in the order it checks them. */
  public enum PortState {
    /** a proxy of ours holds it */
    HELD,
    /** a loopback NFS mount carries it (a mount of someone else's, or an orphan) */
    MOUNTED,
    /** something else listens there (the bind probe fails) */
    LISTENED,
    /** the allocator would hand it out */
    FREE
  }

  /**
   * The range counted by {@link PortState}: what the port metrics and their alert report, so that
   * the alert sees the ports the allocator skips (Go-driver mounts left alone, other listeners).
   */
  public record Census(int total, int held, int mounted, int listened, int free) {}

  private PortState state(int port, Set<Integer> mountedPorts) {
    if (held.contains(port)) {
      return PortState.HELD;
    }
    if (mountedPorts.contains(port)) {
      return PortState.MOUNTED;
    }
    return probe.canBind(port) ? PortState.FREE : PortState.LISTENED;
  }

  /**
   * Counts the range as {@link #allocate} would see it now (a bind probe per port not held or
   * mounted: some milliseconds for a thousand ports).
   *
   * @param mountedPorts ports carried by loopback NFS mounts in a fresh read of the mount table
   */
  public synchronized Census census(Set<Integer> mountedPorts) {
    int[] n = new int[PortState.values().length];
    for (int p = lower; p <= upper; p++) {
      n[state(p, mountedPorts).ordinal()]++;
    }
    return new Census(
        upper - lower + 1,
        n[PortState.HELD.ordinal()],
        n[PortState.MOUNTED.ordinal()],
        n[PortState.LISTENED.ordinal()],
        n[PortState.FREE.ordinal()]);
  }

  /**
   * Allocates a port that no proxy holds, no mount in {@code mountedPorts} carries, and that binds.
   *
   * @param mountedPorts ports carried by loopback NFS mounts in a fresh read of the mount table
   */
  public synchronized int allocate(Set<Integer> mountedPorts) throws NoFreePortException {
    int size = upper - lower + 1;
    int[] n = new int[PortState.values().length];
    for (int i = 0; i < size; i++) {
      int p = lower + Math.floorMod(next - lower + i, size);
      PortState st = state(p, mountedPorts);
      if (st != PortState.FREE) {
        n[st.ordinal()]++;
        continue;
      }
      held.add(p);
      next = p + 1 > upper ? lower : p + 1;
      return p;
    }
    throw new NoFreePortException(
        "no free proxy port in "
            + lower
            + "-"
            + upper
            + ": "
            + n[PortState.HELD.ordinal()]
            + " held by proxies, "
            + n[PortState.MOUNTED.ordinal()]
            + " carried by loopback NFS mounts, "
            + n[PortState.LISTENED.ordinal()]
            + " in use by other listeners");
  }

  /** Whether the bind probe succeeds on the port (nothing listens there). */
  public boolean bindable(int port) {
    return probe.canBind(port);
  }

  /** Marks a port as held (an adopted proxy's port). */
  public synchronized void hold(int port) {
    held.add(port);
  }

  /** Releases a port; callers release only once no mount carries it any more. */
  public synchronized void release(int port) {
    held.remove(port);
  }

  public synchronized boolean isHeld(int port) {
    return held.contains(port);
  }

  public synchronized Set<Integer> held() {
    return Set.copyOf(held);
  }
}

package io.efscsi.supervisor.upgrade;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Takes a copy of another process's listening socket on 127.0.0.1:port, with {@code pidfd_open} and
 * {@code pidfd_getfd} (Linux 5.6): the proxy being replaced needs no help and no new command, so it
 * works on a proxy of any earlier release. The copy shares the socket (one accept queue, one bound
 * port), so handing it to the successor keeps the port listening throughout: no kernel connect is
 * refused, and connections the old process ends reconnect to the same socket.
 *
 * <p>Which descriptor to copy is found without touching any other: the listening socket's inode is
 * read from {@code /proc/net/tcp} (state 0A on 127.0.0.1:port) and matched against {@code readlink
 * /proc/<pid>/fd/*}. The copy is checked ({@code SO_ACCEPTCONN}, {@code getsockname}) before it is
 * returned. Needs the rights of {@code ptrace} attach on the process (the plugin's, being
 * privileged); without them the move is skipped, never done another way.
 */
public final class ListenerHandover {

  private static final long SYS_PIDFD_OPEN = 434;
  private static final long SYS_PIDFD_GETFD = 438;
  private static final int SOL_SOCKET = 1;
  private static final int SO_ACCEPTCONN = 30;
  private static final int AF_INET = 2;
  private static final int AF_INET6 = 10;
  private static final int F_DUPFD_CLOEXEC = 1030;

  private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

  private ListenerHandover() {}

  /** The move cannot take the socket: nothing was changed. */
  public static final class NotTaken extends IOException {
    private static final long serialVersionUID = 1L;
    private final String reason;

    NotTaken(String reason, String message) {
      super(message);
      this.reason = reason;
    }

    /** A short label for metrics: no-pidfd, gone, not-listening. */
    public String reason() {
      return reason;
    }
  }

  /** A listening socket copied into this process: hand {@link #fd} on, then close it. */
  public static final class Taken implements AutoCloseable {
    private final int fd;
    private boolean closed;

    Taken(int fd) {
      this.fd = fd;
    }

    public int fd() {
      return fd;
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        closeFd(fd);
      }
    }
  }

  private static final class Native {
    static final Linker LINKER = Linker.nativeLinker();
    static final MethodHandle SYSCALL =
        link(
            "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
            Linker.Option.firstVariadicArg(1));
    static final MethodHandle GETSOCKOPT =
        link(
            "getsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle GETSOCKNAME =
        link("getsockname", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle FCNTL =
        link(
            "fcntl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2));
    static final MethodHandle CLOSE = link("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    @SuppressWarnings("restricted") // the plugin runs with --enable-native-access (bin/efs-csi)
    private static MethodHandle link(String name, FunctionDescriptor d, Linker.Option... extra) {
      Linker.Option[] options = new Linker.Option[extra.length + 1];
      options[0] = Linker.Option.captureCallState("errno");
      System.arraycopy(extra, 0, options, 1, extra.length);
      return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), d, options);
    }
  }

  /**
   * Copies the socket that process {@code pid} listens with on 127.0.0.1:{@code port}. {@code
   * samePid} is asked once the pid is pinned by its pidfd: false (the pid now names another
   * process) and nothing is taken.
   */
  public static Taken take(long pid, int port, BooleanSupplier samePid) throws IOException {
    Optional<Long> found = listeningInode(port); // Netty's sockets may be dual-stack
    long inode =
        found.orElseThrow(
            () -> new NotTaken("not-listening", "nothing listens on 127.0.0.1:" + port));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment state = arena.allocate(CALL_STATE);
      long pidfd = syscall(state, SYS_PIDFD_OPEN, pid, 0, 0);
      if (pidfd < 0) {
        int e = errno(state);
        throw new NotTaken(
            e == 3 ? "gone" : "no-pidfd", "pidfd_open(" + pid + ") failed: errno " + e);
      }
      try {
        if (!samePid.getAsBoolean()) {
          throw new NotTaken("gone", "process " + pid + " is gone (its pid names another now)");
        }
        int target = fdOf(pid, inode, port);
        long fd = syscall(state, SYS_PIDFD_GETFD, pidfd, target, 0);
        if (fd < 0) {
          int e = errno(state);
          throw new NotTaken(
              "no-pidfd",
              "pidfd_getfd(" + pid + ", fd " + target + ") failed: errno " + e + errnoHint(e));
        }
        int copy = avoidThree((int) fd, state);
        try {
          check(copy, port, arena, state);
        } catch (IOException | RuntimeException e) {
          closeFd(copy);
          throw e;
        }
        return new Taken(copy);
      } finally {
        closeFd((int) pidfd);
      }
    }
  }

  private static String errnoHint(int e) {
    return e == 1 ? " (EPERM: ptrace access to the proxy is denied, e.g. Yama ptrace_scope=3)" : "";
  }

  /** fd 3 is where the successor receives it; a copy there would be passed on as itself. */
  private static int avoidThree(int fd, MemorySegment state) throws IOException {
    if (fd != 3) {
      return fd;
    }
    int dup;
    try {
      dup = (int) Native.FCNTL.invokeExact(state, fd, F_DUPFD_CLOEXEC, 4);
    } catch (Throwable t) {
      throw new IOException("fcntl cannot be called: " + t, t);
    } finally {
      closeFd(fd);
    }
    if (dup < 0) {
      throw new IOException("fcntl(F_DUPFD_CLOEXEC) failed: errno " + errno(state));
    }
    return dup;
  }

  /** The descriptor of {@code pid} that is socket {@code inode}. */
  private static int fdOf(long pid, long inode, int port) throws IOException {
    String want = "socket:[" + inode + "]";
    Path dir = Path.of("/proc", Long.toString(pid), "fd");
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(dir)) {
      for (Path f : fds) {
        try {
          if (Files.readSymbolicLink(f).toString().equals(want)) {
            return Integer.parseInt(f.getFileName().toString());
          }
        } catch (NoSuchFileException closedMeanwhile) {
          // a descriptor closed while listed
        }
      }
    } catch (NoSuchFileException gone) {
      throw new NotTaken("gone", "process " + pid + " is gone");
    }
    throw new NotTaken(
        "not-listening",
        "process "
            + pid
            + " holds no listening socket on 127.0.0.1:"
            + port
            + " (inode "
            + inode
            + ")");
  }

  /**
   * The inode of the socket listening on 127.0.0.1:{@code port} (IPv4, or IPv4-mapped on a
   * dual-stack socket), if any.
   */
  public static Optional<Long> listeningInode(int port) throws IOException {
    Optional<Long> found = listeningInode(Path.of("/proc/net/tcp"), port);
    if (found.isEmpty() && Files.exists(Path.of("/proc/net/tcp6"))) {
      found = listeningInode(Path.of("/proc/net/tcp6"), port);
    }
    return found;
  }

  /**
   * The inode of the socket listening on 127.0.0.1:{@code port}, from a {@code /proc/net/tcp} table
   * (state 0A).
   */
  static Optional<Long> listeningInode(Path table, int port) throws IOException {
    return inodes(table, port, "0A").stream().findFirst();
  }

  /**
   * The inodes of the established sockets whose local end is 127.0.0.1:{@code port} (the server
   * ends of the connections to it), IPv4 and IPv4-mapped.
   */
  public static Set<Long> establishedInodes(int port) throws IOException {
    Set<Long> out = new HashSet<>(inodes(Path.of("/proc/net/tcp"), port, "01"));
    if (Files.exists(Path.of("/proc/net/tcp6"))) {
      out.addAll(inodes(Path.of("/proc/net/tcp6"), port, "01"));
    }
    return out;
  }

  /**
   * The non-zero inodes of the table's sockets on local 127.0.0.1:{@code port} in {@code state}.
   */
  private static List<Long> inodes(Path table, int port, String state) throws IOException {
    String local =
        table.getFileName().toString().endsWith("6")
            ? String.format("0000000000000000FFFF00000100007F:%04X", port)
            : String.format("0100007F:%04X", port);
    List<String> lines = Files.readAllLines(table, StandardCharsets.US_ASCII);
    List<Long> out = new ArrayList<>();
    for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
      String[] f = line.strip().split("\\s+");
      if (f.length > 9 && f[1].equals(local) && f[3].equals(state)) {
        long inode = Long.parseLong(f[9]);
        if (inode != 0) {
          out.add(inode);
        }
      }
    }
    return out;
  }

  private static void check(int fd, int port, Arena arena, MemorySegment state) throws IOException {
    if (!listening(fd, arena, state)) {
      throw new NotTaken("not-listening", "the copied socket (fd " + fd + ") is not listening");
    }
    int bound = localPort(fd, arena, state);
    if (bound != port) {
      throw new NotTaken(
          "not-listening",
          "the copied socket (fd " + fd + ") is bound to port " + bound + ", not " + port);
    }
  }

  /** Whether {@code fd} is a listening socket ({@code SO_ACCEPTCONN}). */
  public static boolean listening(int fd) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      return listening(fd, arena, arena.allocate(CALL_STATE));
    }
  }

  /** The IPv4 port {@code fd} is bound to. */
  public static int localPort(int fd) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      return localPort(fd, arena, arena.allocate(CALL_STATE));
    }
  }

  private static boolean listening(int fd, Arena arena, MemorySegment state) throws IOException {
    MemorySegment value = arena.allocate(JAVA_INT);
    MemorySegment len = arena.allocate(JAVA_INT);
    len.set(JAVA_INT, 0, 4);
    int rc;
    try {
      rc = (int) Native.GETSOCKOPT.invokeExact(state, fd, SOL_SOCKET, SO_ACCEPTCONN, value, len);
    } catch (Throwable t) {
      throw new IOException("getsockopt cannot be called: " + t, t);
    }
    if (rc != 0) {
      throw new IOException("getsockopt(" + fd + ", SO_ACCEPTCONN) failed: errno " + errno(state));
    }
    return value.get(JAVA_INT, 0) != 0;
  }

  private static int localPort(int fd, Arena arena, MemorySegment state) throws IOException {
    MemorySegment addr = arena.allocate(128);
    MemorySegment len = arena.allocate(JAVA_INT);
    len.set(JAVA_INT, 0, 128);
    int rc;
    try {
      rc = (int) Native.GETSOCKNAME.invokeExact(state, fd, addr, len);
    } catch (Throwable t) {
      throw new IOException("getsockname cannot be called: " + t, t);
    }
    if (rc != 0) {
      throw new IOException("getsockname(" + fd + ") failed: errno " + errno(state));
    }
    short family = addr.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 0);
    if (family != AF_INET && family != AF_INET6) {
      throw new IOException("fd " + fd + " is not an IP socket (family " + family + ")");
    }
    return Short.toUnsignedInt(
        addr.get(java.lang.foreign.ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2));
  }

  private static long syscall(MemorySegment state, long number, long a, long b, long c)
      throws IOException {
    try {
      return (long) Native.SYSCALL.invokeExact(state, number, a, b, c);
    } catch (Throwable t) {
      throw new NotTaken("no-pidfd", "syscall " + number + " cannot be called: " + t);
    }
  }

  private static int errno(MemorySegment state) {
    return (int) ERRNO.get(state, 0L);
  }

  static void closeFd(int fd) {
    try (Arena arena = Arena.ofConfined()) {
      int rc = (int) Native.CLOSE.invokeExact(arena.allocate(CALL_STATE), fd);
      assert rc == 0 || rc == -1;
    } catch (Throwable ignored) {
      // nothing to do: the descriptor is lost either way
    }
  }
}

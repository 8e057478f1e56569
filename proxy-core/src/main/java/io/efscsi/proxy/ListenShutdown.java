package io.efscsi.proxy;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * {@code shutdown(fd, SHUT_RD)} on a listening TCP socket, through the JDK's foreign function
 * interface. On Linux this stops the socket listening (queued connections are reset, new ones are
 * refused) while it stays bound to its port, and a later {@code listen(2)} on the same descriptor
 * resumes. Netty's own {@code Socket.shutdown} cannot be used: it records the shutdown in the
 * channel's state, which then stops the channel accepting for good.
 *
 * <p>The handle is made on first use only, so a proxy whose upstream never fails never links it.
 */
final class ListenShutdown {

  private static final int SHUT_RD = 0;
  private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

  private ListenShutdown() {}

  private static final class Handle {
    static final MethodHandle SHUTDOWN = link();

    @SuppressWarnings("restricted") // the proxy runs with --enable-native-access (jvm.options)
    private static MethodHandle link() {
      Linker linker = Linker.nativeLinker();
      return linker.downcallHandle(
          linker.defaultLookup().find("shutdown").orElseThrow(),
          FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT),
          Linker.Option.captureCallState("errno"));
    }
  }

  /** Stops the listening socket {@code fd} listening; it keeps its port. */
  static void stopListening(int fd) throws IOException {
    int rc;
    int errno;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment state = arena.allocate(CALL_STATE);
      rc = (int) Handle.SHUTDOWN.invokeExact(state, fd, SHUT_RD);
      errno = (int) ERRNO.get(state, 0L);
    } catch (Throwable t) {
      throw new IOException("shutdown(2) cannot be called: " + t, t);
    }
    if (rc != 0) {
      throw new IOException("shutdown(" + fd + ", SHUT_RD) failed: errno " + errno);
    }
  }
}

package io.efscsi.supervisor.process;

import io.efscsi.supervisor.cgroup.Placement;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/** Starts proxy processes. */
public interface ProxyLauncher {

  /**
   * A started process.
   *
   * @param pid its pid (the exec chain keeps it from the wrapper to the JVM)
   * @param child the process handle when it is our child (exit code known), else empty
   */
  record Started(long pid, Optional<Process> child) {}

  /**
   * Starts a proxy with the given config file in its own session, inside {@code placement}, stdout
   * and stderr appended to {@code logFile}. Returns once the process exists; readiness is the
   * caller's business (control socket).
   */
  Started start(Path configFile, Path logFile, Placement placement) throws IOException;

  /**
   * The build of the proxy this launcher starts ({@code ProxyBuild}); empty when unknown, and then
   * no proxy is ever moved to it.
   */
  default String build() {
    return "";
  }

  /**
   * As {@link #start}, the proxy serving the listening socket {@code listenerFd} of this process
   * (passed on; the caller still closes its own copy) in standby, until told {@code serve}.
   */
  default Started startOnListener(
      Path configFile, Path logFile, Placement placement, int listenerFd) throws IOException {
    throw new IOException("this launcher cannot hand a listening socket to a proxy");
  }
}

package io.efscsi.supervisor.host;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import jnr.posix.POSIX;
import jnr.posix.POSIXFactory;
import jnr.posix.util.DefaultPOSIXHandler;

/**
 * The host's POSIX calls, through jnr-posix: one native binding for the process, loaded on first
 * use. Its stub library ({@code libjffi}) is read from the distribution's {@code lib/native/jni}
 * when {@link #useLibrariesOf} was told where that is: otherwise jffi copies it out of its jar into
 * {@code java.io.tmpdir}, which a read-only root file system (the chart's default) does not allow.
 */
public final class Posix {

  private static volatile POSIX posix;

  private Posix() {}

  /** The native binding; fails with a message naming the cause when it cannot be loaded. */
  public static POSIX get() {
    POSIX p = posix;
    if (p == null) {
      synchronized (Posix.class) {
        p = posix;
        if (p == null) {
          try {
            p = POSIXFactory.getNativePOSIX(new DefaultPOSIXHandler());
          } catch (RuntimeException | LinkageError e) {
            throw new IllegalStateException(
                "cannot load the native POSIX binding (jnr-posix; jffi.boot.library.path="
                    + System.getProperty("jffi.boot.library.path")
                    + "): "
                    + e,
                e);
          }
          if (!p.isNative()) {
            throw new IllegalStateException(
                "the POSIX binding is not native (jnr-posix fell back to Java)");
          }
          posix = p;
        }
      }
    }
    return p;
  }

  /**
   * Points jffi at the stub library of this machine's architecture under {@code
   * <home>/lib/native/jni/<arch>-Linux}, when that exists and nothing else was set; loads the
   * binding at once so that a node whose binding cannot load fails at start, not at a mount.
   */
  public static void useLibrariesOf(Path home) {
    if (System.getProperty("jffi.boot.library.path") == null) {
      Path dir = home.resolve("lib/native/jni").resolve(archDir());
      if (Files.isDirectory(dir)) {
        System.setProperty("jffi.boot.library.path", dir.toString());
      }
    }
    get();
  }

  /** jffi's directory name for this JVM's architecture. */
  static String archDir() {
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    return switch (arch) {
      case "amd64", "x86_64" -> "x86_64-Linux";
      case "aarch64", "arm64" -> "aarch64-Linux";
      default -> arch + "-Linux";
    };
  }
}

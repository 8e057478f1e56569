package io.efscsi.supervisor.state;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says that a supervisor runs on a state dir: it holds a POSIX record lock on {@code
 * supervisor.lock} there for as long as it runs. The kernel lets the lock go when the process ends,
 * however it ends (a plugin container stopped, SIGKILL), so {@link #held} is a live answer: a
 * handback waits for it to be false before it stops any proxy, as the supervisor would start such a
 * proxy again.
 */
public final class SupervisorLock implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SupervisorLock.class);

  /** The lock file's name in the state dir. */
  public static final String FILE = "supervisor.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private SupervisorLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Takes the lock, or returns empty (with a warning) when another process holds it: a second
   * supervisor on one state dir is a mistake this does not make worse by refusing to start.
   */
  public static Optional<SupervisorLock> take(Path stateDir) throws IOException {
    Files.createDirectories(stateDir);
    FileChannel ch =
        FileChannel.open(
            stateDir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    try {
      FileLock l = ch.tryLock();
      if (l != null) {
        return Optional.of(new SupervisorLock(ch, l));
      }
      LOG.warn(
          "another process holds {} in {}: two supervisors on one state dir adopt each other's"
              + " proxies",
          FILE,
          stateDir);
    } catch (OverlappingFileLockException sameProcess) {
      LOG.warn("this process already supervises {}", stateDir);
    }
    ch.close();
    return Optional.empty();
  }

  /** Whether a running process holds the lock of {@code stateDir} (false when there is no file). */
  public static boolean held(Path stateDir) throws IOException {
    Path file = stateDir.resolve(FILE);
    if (!Files.exists(file)) {
      return false;
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      FileLock l = ch.tryLock();
      if (l == null) {
        return true;
      }
      l.release();
      return false;
    } catch (OverlappingFileLockException sameProcess) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    try {
      lock.release();
    } finally {
      channel.close();
    }
  }
}

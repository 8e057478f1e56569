package io.efscsi.supervisor;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxy's files beside its state record: config, control socket and a bounded log (copied to
 * {@code .1} and truncated past the cap; the proxy appends, so truncation is safe).
 */
final class ProxyFiles {

  private static final Logger LOG = LoggerFactory.getLogger(ProxyFiles.class);

  private final Path dir;
  private final String id;
  private final long logMaxBytes;

  ProxyFiles(Path dir, String id, long logMaxBytes) {
    this.dir = dir;
    this.id = id;
    this.logMaxBytes = logMaxBytes;
  }

  Path config() {
    return dir.resolve(id + ".properties");
  }

  Path controlSocket() {
    return dir.resolve(id + ".sock");
  }

  /**
   * The config of a successor starting in standby during a move ({@link ProxyMove}), named after
   * its group ({@code <id>} or {@code <id>-b}, alternating): a proxy deletes its control socket's
   * path when it exits, so the successor of one move must not use the path its predecessor (the
   * successor of the move before) was started with.
   */
  Path nextConfig(String group) {
    return dir.resolve(group + ".next.properties");
  }

  /** The control socket of a successor until it is renamed to the proxy's own. */
  Path nextControlSocket(String group) {
    return dir.resolve(group + ".next.sock");
  }

  private Path[] nextFiles() {
    return new Path[] {
      nextConfig(id), nextControlSocket(id), nextConfig(id + "-b"), nextControlSocket(id + "-b")
    };
  }

  /** Removes a successor's files (a move undone, or finished). */
  void deleteNext() {
    for (Path p : nextFiles()) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        LOG.warn("cannot delete {}: {}", p, e.getMessage());
      }
    }
  }

  Path log() {
    return dir.resolve(id + ".log");
  }

  /** {@code <epoch millis> <why>}: the proxy's last exit, for {@code efs-csi status}. */
  Path lastExit() {
    return dir.resolve(id + ".exit");
  }

  /** Records an exit (best effort: it only informs). */
  void writeLastExit(long millis, String why) {
    try {
      Files.writeString(lastExit(), millis + " " + why + "\n", StandardCharsets.UTF_8);
    } catch (IOException e) {
      LOG.debug("cannot write {}: {}", lastExit(), e.toString());
    }
  }

  private Path rotatedLog() {
    return dir.resolve(id + ".log.1");
  }

  /** Keeps the log bounded. */
  void rotateLog() {
    Path log = log();
    try {
      if (Files.exists(log) && Files.size(log) > logMaxBytes) {
        Files.copy(log, rotatedLog(), StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.WRITE)) {
          ch.truncate(0);
        }
      }
    } catch (IOException e) {
      LOG.debug("cannot rotate {}: {}", log, e.toString());
    }
  }

  /** The last lines of the log, for error messages. */
  String logTail() {
    try {
      byte[] all = Files.readAllBytes(log());
      String text =
          new String(
              all,
              Math.max(0, all.length - 600),
              Math.min(all.length, 600),
              StandardCharsets.UTF_8);
      return "log " + log() + " ends with: " + text.strip().replace('\n', ' ');
    } catch (IOException e) {
      return "no log at " + log();
    }
  }

  /** Removes every file of the proxy. */
  void delete() {
    List<Path> all =
        new ArrayList<>(List.of(config(), controlSocket(), log(), rotatedLog(), lastExit()));
    all.addAll(List.of(nextFiles()));
    for (Path p : all) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        LOG.debug("cannot delete {}: {}", p, e.toString());
      }
    }
  }
}

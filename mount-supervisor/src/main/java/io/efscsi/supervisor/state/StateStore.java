package io.efscsi.supervisor.state;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JSON file per proxy under {@code <state-dir>/proxies}. Writes are atomic (temp file, fsync,
 * rename, fsync of the directory), so a crash leaves the old or the new record, never half of one.
 * A record that cannot be read is moved aside ({@code *.corrupt-<millis>}) with a log line.
 */
public final class StateStore {

  private static final Logger LOG = LoggerFactory.getLogger(StateStore.class);
  private static final String SUFFIX = ".json";

  private final Path dir;

  public StateStore(Path stateDir) throws IOException {
    this.dir = stateDir.resolve("proxies");
    Files.createDirectories(dir);
  }

  /** Where a proxy's files (record, config, control socket, log) live. */
  public Path dir() {
    return dir;
  }

  public Path recordFile(String id) {
    return dir.resolve(id + SUFFIX);
  }

  /** Every readable record; unreadable ones are moved aside. */
  public List<ProxyRecord> list() throws IOException {
    return list(dir, this::moveAside);
  }

  /**
   * Every readable record of {@code stateDir}, read without a single write: no dir made, an
   * unreadable record left where it is and named in the log. For a dry run, which changes nothing.
   */
  public static List<ProxyRecord> peek(Path stateDir) throws IOException {
    Path dir = stateDir.resolve("proxies");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    return list(dir, (f, why) -> LOG.warn("state record {} is unreadable ({}); skipped", f, why));
  }

  private interface Unreadable {
    void found(Path f, String why) throws IOException;
  }

  private static List<ProxyRecord> list(Path dir, Unreadable unreadable) throws IOException {
    List<ProxyRecord> out = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
      for (Path f : files) {
        read(f, unreadable).ifPresent(out::add);
      }
    }
    out.sort(java.util.Comparator.comparingInt(ProxyRecord::port));
    return out;
  }

  private static java.util.Optional<ProxyRecord> read(Path f, Unreadable unreadable)
      throws IOException {
    String text;
    try {
      text = Files.readString(f, StandardCharsets.UTF_8);
    } catch (NoSuchFileException gone) {
      return java.util.Optional.empty();
    } catch (java.nio.charset.MalformedInputException e) {
      unreadable.found(f, "not UTF-8");
      return java.util.Optional.empty();
    }
    try {
      ProxyRecord r = ProxyRecord.fromJson(text);
      String expected = f.getFileName().toString();
      if (!expected.equals(r.id() + SUFFIX)) {
        unreadable.found(f, "its id '" + r.id() + "' does not match its file name");
        return java.util.Optional.empty();
      }
      return java.util.Optional.of(r);
    } catch (IllegalArgumentException | ArithmeticException e) {
      unreadable.found(f, e.getMessage());
      return java.util.Optional.empty();
    }
  }

  private void moveAside(Path f, String why) throws IOException {
    Path aside = f.resolveSibling(f.getFileName() + ".corrupt-" + System.currentTimeMillis());
    Files.move(f, aside, StandardCopyOption.REPLACE_EXISTING);
    LOG.error("state record {} is unreadable ({}); moved aside to {}", f, why, aside);
  }

  /** Writes a record atomically. */
  public void write(ProxyRecord r) throws IOException {
    Path target = recordFile(r.id());
    Path tmp = dir.resolve("." + r.id() + SUFFIX + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer buf = ByteBuffer.wrap(r.toJson().getBytes(StandardCharsets.UTF_8));
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    }
    syncDir();
  }

  /** Removes a record (absent is fine). */
  public void delete(String id) throws IOException {
    Files.deleteIfExists(recordFile(id));
    syncDir();
  }

  /**
   * Removes a proxy that is gone for good with everything of it in the dir: its record and the
   * files beside it ({@code <id>.properties}, {@code .sock}, {@code .log}, {@code .exit}, …).
   */
  public void deleteWithFiles(String id) throws IOException {
    delete(id);
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, id + ".*")) {
      for (Path f : files) {
        Files.deleteIfExists(f);
      }
    }
    syncDir();
  }

  private void syncDir() {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // some file systems refuse fsync on a directory; the rename is still atomic
      LOG.debug("fsync of {} failed: {}", dir, e.toString());
    }
  }
}

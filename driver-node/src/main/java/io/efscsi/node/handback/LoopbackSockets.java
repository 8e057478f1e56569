package io.efscsi.node.handback;

import io.efscsi.supervisor.upgrade.ListenerHandover;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The sockets on a 127.0.0.1 port, from {@code /proc/net/tcp} and {@code tcp6}: who listens, and
 * the server ends of the kernel's connections. Read only: a probe that bound or connected to the
 * port could take it from the tunnel being started or be taken for a kernel connection.
 */
final class LoopbackSockets {

  private static final String ESTABLISHED = "01";

  private LoopbackSockets() {}

  /** The inode of the socket listening on the port, if any. */
  static Optional<Long> listening(int port) throws IOException {
    return ListenerHandover.listeningInode(port);
  }

  /** The inodes of the established sockets whose local end is 127.0.0.1:port. */
  static Set<Long> served(int port) throws IOException {
    Set<Long> out = new HashSet<>();
    served(Path.of("/proc/net/tcp"), String.format("0100007F:%04X", port), out);
    served(
        Path.of("/proc/net/tcp6"),
        String.format("0000000000000000FFFF00000100007F:%04X", port),
        out);
    return out;
  }

  private static void served(Path table, String local, Set<Long> out) throws IOException {
    if (!Files.exists(table)) {
      return;
    }
    List<String> lines = Files.readAllLines(table, StandardCharsets.US_ASCII);
    for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
      String[] f = line.strip().split("\\s+");
      if (f.length > 9 && f[1].equals(local) && f[3].equals(ESTABLISHED)) {
        long inode = Long.parseLong(f[9]);
        if (inode != 0) {
          out.add(inode);
        }
      }
    }
  }
}

package io.efscsi.emulator.mounttarget;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * nfs-ganesha (Debian's {@code nfs-ganesha} and {@code nfs-ganesha-vfs}) serving one directory as
 * NFSv4.0-4.2 on 127.0.0.1, pseudo path {@value #PSEUDO}, root not squashed (the mount target
 * applies access points' identities).
 */
public final class Ganesha implements AutoCloseable {

  public static final String PSEUDO = "/export";
  public static final String BINARY = "ganesha.nfsd";

  private final Path dir;
  private final Path export;
  private final int port;
  private final Process process;

  private Ganesha(Path dir, Path export, int port, Process process) {
    this.dir = dir;
    this.export = export;
    this.port = port;
    this.process = process;
  }

  /** The binary on the PATH (or /usr/sbin, /sbin), or null. */
  public static Path find() {
    for (String d : (System.getenv().getOrDefault("PATH", "") + ":/usr/sbin:/sbin").split(":")) {
      Path p = Path.of(d.isEmpty() ? "." : d, BINARY);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  /** Starts ganesha with its config, log and pid file in {@code dir}, exporting {@code dir/fs}. */
  public static Ganesha start(Path dir) throws IOException, InterruptedException {
    Path binary = find();
    if (binary == null) {
      throw new IOException(
          BINARY + " is not installed (Debian: apt-get install nfs-ganesha nfs-ganesha-vfs)");
    }
    Path export = Files.createDirectories(dir.resolve("fs"));
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path conf = dir.resolve("ganesha.conf");
    Files.writeString(
        conf,
        """
        NFS_CORE_PARAM { NFS_Port = %d; Bind_addr = 127.0.0.1; Protocols = 4;
          Enable_NLM = false; Enable_RQUOTA = false; MNT_Port = 0; }
        NFSV4 { Graceless = true; Minor_Versions = 0,1,2; }
        NFS_KRB5 { Active_krb5 = false; }
        EXPORT { Export_Id = 1; Path = %s; Pseudo = %s; Access_Type = RW;
          Squash = No_Root_Squash; SecType = sys; Protocols = 4; Transports = TCP;
          FSAL { Name = VFS; } }
        LOG { Default_Log_Level = EVENT; }
        """
            .formatted(port, export, PSEUDO));
    Process p =
        new ProcessBuilder(
                List.of(
                    binary.toString(),
                    "-F",
                    "-L",
                    dir.resolve("ganesha.log").toString(),
                    "-f",
                    conf.toString(),
                    "-p",
                    dir.resolve("ganesha.pid").toString(),
                    "-N",
                    "NIV_EVENT"))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("ganesha.out").toFile())
            .start();
    Ganesha g = new Ganesha(dir, export, port, p);
    try {
      g.awaitServing(30);
      return g;
    } catch (IOException | RuntimeException | InterruptedException e) {
      g.close();
      throw e;
    }
  }

  private void awaitServing(int seconds) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    IOException last = null;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException("ganesha exited " + process.exitValue() + ": " + log());
      }
      try (Nfs4Client c = Nfs4Client.connect("127.0.0.1", port, 0, 0)) {
        c.lookup(List.of(PSEUDO.substring(1)));
        return;
      } catch (IOException e) {
        last = e;
        Thread.sleep(100);
      }
    }
    throw new IOException(
        "ganesha does not serve after " + seconds + " s (" + last + "): " + log());
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("ganesha.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  public int port() {
    return port;
  }

  /** The exported directory: the file system's root. */
  public Path export() {
    return export;
  }

  public long pid() {
    return process.pid();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(5, TimeUnit.SECONDS);
    }
  }
}

package io.efscsi.demo;

import io.efscsi.emulator.mounttarget.Nfs4Client;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How the demo's pods read and write. With a kernel NFS client the pods' mounts are NFS mounts
 * through the proxy and files are used as files. Without one (these build machines), I/O goes
 * through the same proxy port in user space: libnfs's nfs-cp for the small file, and for the
 * transfer across the heal a READ loop of our own that reconnects and resends as a hard mount does
 * (libnfs gives up when its connection drops).
 */
sealed interface DemoIo {

  /** A one-line description for the narrative. */
  String how();

  /** Writes {@code data} as {@code name} in the pod whose mount is {@code target}. */
  void write(Path target, String name, byte[] data) throws Exception;

  /** Reads {@code name} in the pod whose mount is {@code target}. */
  byte[] read(Path target, String name) throws Exception;

  /** Reads {@code name} whole, counting bytes into {@code progress}; returns its SHA-256. */
  String transfer(Path target, String name, AtomicLong progress) throws Exception;

  static String sha256(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The pods' mounts are real NFS mounts: files. */
  record Kernel() implements DemoIo {
    @Override
    public String how() {
      return "files in the pods' NFS mounts (kernel client)";
    }

    @Override
    public void write(Path target, String name, byte[] data) throws IOException {
      Files.write(target.resolve(name), data);
    }

    @Override
    public byte[] read(Path target, String name) throws IOException {
      return Files.readAllBytes(target.resolve(name));
    }

    @Override
    public String transfer(Path target, String name, AtomicLong progress) throws Exception {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[1 << 20];
      try (InputStream in = Files.newInputStream(target.resolve(name))) {
        for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
          sha.update(buf, 0, n);
          progress.addAndGet(n);
        }
      }
      return HexFormat.of().formatHex(sha.digest());
    }
  }

  /** No kernel client: NFS in user space through the proxy's port, as the access point's user. */
  record UserSpace(int proxyPort, long uid, long gid, Path scratch) implements DemoIo {
    @Override
    public String how() {
      return "NFSv4.0 in user space through the proxy on 127.0.0.1:" + proxyPort;
    }

    private String url(String name) {
      // "//": libnfs splits off the last component as the file, the rest must be absolute
      return "nfs://127.0.0.1//" + name + "?version=4&nfsport=" + proxyPort;
    }

    @Override
    public void write(Path target, String name, byte[] data) throws Exception {
      Path local = scratch.resolve("upload-" + name);
      Files.write(local, data);
      run("nfs-cp", local.toString(), url(name));
      Files.delete(local);
    }

    @Override
    public byte[] read(Path target, String name) throws Exception {
      Path local = scratch.resolve("download-" + name);
      run("nfs-cp", url(name), local.toString());
      byte[] data = Files.readAllBytes(local);
      Files.delete(local);
      return data;
    }

    private void run(String... cmd) throws Exception {
      Path out = scratch.resolve("nfs-cp.out");
      Process p =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", cmd) + " failed: " + Files.readString(out).strip());
      }
    }

    @Override
    public String transfer(Path target, String name, AtomicLong progress) throws Exception {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      Nfs4Client c = null;
      byte[] fh = null;
      long offset = 0;
      try {
        while (true) {
          try {
            if (c == null) {
              c = Nfs4Client.connect("127.0.0.1", proxyPort, uid, gid);
              fh = fh == null ? c.lookup(List.of(name)) : fh;
            }
            Nfs4Client.Read r = c.read(fh, offset, 1 << 20);
            sha.update(r.data());
            offset += r.data().length;
            progress.set(offset);
            if (r.eof() || r.data().length == 0) {
              return HexFormat.of().formatHex(sha.digest());
            }
          } catch (Nfs4Client.NfsException e) {
            throw e; // an NFS error is an answer, not a lost connection
          } catch (IOException lost) {
            if (System.nanoTime() > deadline) {
              throw lost;
            }
            if (c != null) {
              c.close();
              c = null;
            }
            Thread.sleep(50); // the connection dropped: reconnect and resend, as a hard mount
          }
        }
      } finally {
        if (c != null) {
          c.close();
        }
      }
    }
  }
}

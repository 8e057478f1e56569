package io.efscsi.emulator.mounttarget;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * One file system's mount target on 127.0.0.1: TLS (see {@link MountTargetTls}), then the bind
 * call, then every record relayed to nfs-ganesha on a connection of its own, with the access point
 * of the client certificate applied (see {@link Records}). On the first connection for an access
 * point its root directory is created with the access point's owner and permissions, as EFS does on
 * first mount.
 */
public final class MountTarget implements AutoCloseable {

  /** An access point as the mount target needs it; uid and gid -1 when it has no POSIX user. */
  public record AccessPointDirectory(
      String id,
      long uid,
      long gid,
      List<Long> secondaryGids,
      String path,
      long ownerUid,
      long ownerGid,
      String permissions) {}

  /** Looks access points up by id (the EFS API's state). */
  @FunctionalInterface
  public interface AccessPoints {
    Optional<AccessPointDirectory> find(String id);
  }

  private final String fileSystemId;
  private final String dnsName;
  private final Ganesha ganesha;
  private final Path caFile;
  private final SSLServerSocket listener;
  private final AccessPoints accessPoints;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final Map<String, byte[]> roots = new ConcurrentHashMap<>();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicLong connections = new AtomicLong();
  private final AtomicLong binds = new AtomicLong();

  private MountTarget(
      String fileSystemId,
      String dnsName,
      Ganesha ganesha,
      Path caFile,
      SSLServerSocket listener,
      AccessPoints accessPoints) {
    this.fileSystemId = fileSystemId;
    this.dnsName = dnsName;
    this.ganesha = ganesha;
    this.caFile = caFile;
    this.listener = listener;
    this.accessPoints = accessPoints;
  }

  /**
   * Starts ganesha in {@code dir/nfs} and the TLS listener for {@code fileSystemId} in {@code
   * region}; the CA certificate to trust is written to {@code dir/ca.pem}.
   */
  public static MountTarget start(
      String fileSystemId, String region, Path dir, AccessPoints accessPoints)
      throws IOException, InterruptedException {
    String dnsName = fileSystemId + ".efs." + region + ".amazonaws.com";
    Path caFile = dir.resolve("ca.pem");
    var tls = MountTargetTls.serverContext(dnsName, caFile);
    Ganesha ganesha = Ganesha.start(Files.createDirectories(dir.resolve("nfs")));
    try {
      SSLServerSocket listener =
          (SSLServerSocket)
              tls.getServerSocketFactory()
                  .createServerSocket(0, 64, InetAddress.getLoopbackAddress());
      listener.setWantClientAuth(true);
      MountTarget t =
          new MountTarget(fileSystemId, dnsName, ganesha, caFile, listener, accessPoints);
      t.threads.submit(t::acceptLoop);
      return t;
    } catch (IOException | RuntimeException e) {
      ganesha.close();
      throw e;
    }
  }

  public int port() {
    return listener.getLocalPort();
  }

  public String dnsName() {
    return dnsName;
  }

  /** The CA certificate (PEM) a client must trust. */
  public Path caFile() {
    return caFile;
  }

  public Ganesha nfsServer() {
    return ganesha;
  }

  /** Where an access point's root lives on this machine, below the export. */
  public Path directory(String path) {
    return ganesha.export().resolve(path.replaceFirst("^/+", ""));
  }

  /** TLS connections accepted so far. */
  public long connections() {
    return connections.get();
  }

  /** Bind calls answered so far. */
  public long binds() {
    return binds.get();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        s.setTcpNoDelay(true);
        open.add(s);
        connections.incrementAndGet();
        threads.submit(() -> serve((SSLSocket) s));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(SSLSocket client) {
    Socket nfs = null;
    try (client) {
      client.startHandshake();
      Optional<AccessPointDirectory> ap = accessPoint(client);
      byte[] root = root(ap);
      Optional<Records.Identity> identity =
          ap.filter(a -> a.uid() >= 0)
              .map(a -> new Records.Identity(a.uid(), a.gid(), a.secondaryGids()));
      nfs = new Socket(InetAddress.getLoopbackAddress(), ganesha.port());
      open.add(nfs);
      nfs.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(client.getInputStream(), 1 << 16);
      OutputStream toClient = new BufferedOutputStream(client.getOutputStream(), 1 << 16);
      Set<Integer> mapped = ConcurrentHashMap.newKeySet();
      OutputStream toNfs = new BufferedOutputStream(nfs.getOutputStream(), 1 << 16);
      byte[] first = Xdr.readRecord(in);
      if (first == null) {
        return;
      }
      Optional<byte[]> bound = Records.bindReply(first, "p-" + fileSystemId);
      if (bound.isPresent()) {
        binds.incrementAndGet();
        Xdr.writeRecord(toClient, bound.get());
      } else {
        forward(first, identity, root, mapped, toNfs);
      }
      Socket upstream = nfs;
      threads.submit(() -> replies(upstream, client, mapped));
      for (byte[] call = Xdr.readRecord(in); call != null; call = Xdr.readRecord(in)) {
        forward(call, identity, root, mapped, toNfs);
      }
    } catch (IOException | RuntimeException e) {
      // the client went away (a proxy killed with SIGKILL does), or NFS did
    } finally {
      closeQuietly(nfs);
      open.remove(client);
      if (nfs != null) {
        open.remove(nfs);
      }
    }
  }

  private Optional<AccessPointDirectory> accessPoint(SSLSocket client) throws IOException {
    X509Certificate cert;
    try {
      cert = (X509Certificate) client.getSession().getPeerCertificates()[0];
    } catch (SSLPeerUnverifiedException none) {
      return Optional.empty();
    }
    Optional<String> id = MountTargetTls.accessPoint(cert);
    if (id.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        accessPoints
            .find(id.get())
            .orElseThrow(() -> new IOException("access point " + id.get() + " does not exist")));
  }

  /** The root file handle of a connection: its access point's directory, made on first use. */
  private byte[] root(Optional<AccessPointDirectory> ap) throws IOException {
    String path = ap.map(AccessPointDirectory::path).orElse("/");
    byte[] known = roots.get(path);
    if (known != null) {
      return known;
    }
    if (ap.isPresent()) {
      create(ap.get());
    }
    List<String> components = new ArrayList<>();
    components.add(Ganesha.PSEUDO.substring(1));
    for (String c : path.split("/")) {
      if (!c.isEmpty()) {
        components.add(c);
      }
    }
    try (Nfs4Client c = Nfs4Client.connect("127.0.0.1", ganesha.port(), 0, 0)) {
      byte[] fh = c.lookup(components);
      roots.put(path, fh);
      return fh;
    }
  }

  private synchronized void create(AccessPointDirectory ap) throws IOException {
    Path dir = directory(ap.path());
    if (Files.isDirectory(dir)) {
      return;
    }
    Files.createDirectories(dir.getParent());
    Files.createDirectory(dir);
    Files.setAttribute(dir, "unix:uid", (int) ap.ownerUid());
    Files.setAttribute(dir, "unix:gid", (int) ap.ownerGid());
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(rwx(ap.permissions())));
  }

  /** "750" as "rwxr-x---". */
  static String rwx(String octal) {
    StringBuilder sb = new StringBuilder();
    for (char c : octal.substring(octal.length() - 3).toCharArray()) {
      int v = c - '0';
      sb.append((v & 4) != 0 ? 'r' : '-').append((v & 2) != 0 ? 'w' : '-');
      sb.append((v & 1) != 0 ? 'x' : '-');
    }
    return sb.toString();
  }

  private static void forward(
      byte[] call,
      Optional<Records.Identity> identity,
      byte[] root,
      Set<Integer> mapped,
      OutputStream toNfs)
      throws IOException {
    Records.Rewritten r = Records.rewrite(call, identity, root);
    if (r.rootMapped()) {
      mapped.add(Records.xid(call));
    }
    Xdr.writeRecord(toNfs, r.call());
  }

  /** ganesha's replies to the client, mapped root operations renamed back. */
  private static void replies(Socket nfs, Socket client, Set<Integer> mapped) {
    try {
      InputStream in = new BufferedInputStream(nfs.getInputStream(), 1 << 16);
      OutputStream out = new BufferedOutputStream(client.getOutputStream(), 1 << 16);
      for (byte[] reply = Xdr.readRecord(in); reply != null; reply = Xdr.readRecord(in)) {
        if (mapped.remove(Records.xid(reply))) {
          Records.restoreRootOp(reply);
        }
        Xdr.writeRecord(out, reply);
      }
    } catch (IOException e) {
      // one side went away
    } finally {
      closeQuietly(client);
      closeQuietly(nfs);
    }
  }

  private static void closeQuietly(Socket s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    closeQuietly(listener);
    open.forEach(MountTarget::closeQuietly);
    threads.shutdownNow();
    ganesha.close();
  }

  private static void closeQuietly(java.net.ServerSocket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}

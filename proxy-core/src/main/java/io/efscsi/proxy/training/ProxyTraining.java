package io.efscsi.proxy.training;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Build time only: the workload behind the proxy's AOT cache ({@code lib/proxy/proxy.aot}). {@code
 * bin/efs-csi train} runs this class in a JVM that is not recorded, and gives it the command of the
 * one that is: {@link TrainingHost}, a real proxy process (TLS) with a plain proxy beside it. This
 * JVM plays the mount target ({@link TrainingUpstream}) and the NFS client, and drives what a real
 * session loads: the proxy's start on a configuration file, the TLS handshake through BoringSSL,
 * BindClientToPartition, RPC records both ways, the control socket's status, ping, serve and drain,
 * and the stop that drain leads to. The mount target's side (server-side TLS, a PKCS#12 key store)
 * and the client's stay out of the cache: in one JVM with the proxy they went into it, and every
 * proxy loaded them at its start (docs/proxy.md).
 *
 * <p>Usage: {@code ProxyTraining <dir> <command...>}, where dir holds {@code server.p12} (password
 * {@code training}) and {@code ca.pem}, made by keytool for {@link #SERVER_NAME}; the two
 * configuration files (plain, then TLS) are appended to the command.
 */
public final class ProxyTraining {

  static final String SERVER_NAME = "fs-00000000.efs.training.invalid";
  private static final int REPLY_BYTES = 256 * 1024;
  private static final int CALLS = 400;
  private static final long START_MILLIS = 60_000;

  private ProxyTraining() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: ProxyTraining <dir> <command of the recorded JVM...>");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    List<String> command = new ArrayList<>(List.of(args).subList(1, args.length));
    try (TrainingUpstream tls = TrainingUpstream.start(dir.resolve("server.p12"), REPLY_BYTES);
        TrainingUpstream plain = TrainingUpstream.start(null, REPLY_BYTES)) {
      int plainPort;
      int tlsPort;
      try (ServerSocket a = new ServerSocket(0);
          ServerSocket b = new ServerSocket(0)) {
        plainPort = a.getLocalPort();
        tlsPort = b.getLocalPort();
      }
      command.add(config(dir, "plain", plainPort, plain.port(), false).toString());
      command.add(config(dir, "tls", tlsPort, tls.port(), true).toString());
      Path log = dir.resolve("host.log");
      ProcessBuilder pb =
          new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().put("MALLOC_ARENA_MAX", "1"); // as the supervisor starts a proxy
      Process host = pb.start();
      try {
        awaitListening(host, plainPort, log);
        awaitListening(host, tlsPort, log);
        calls(plainPort);
        calls(tlsPort);
        Path control = dir.resolve("control-tls.sock");
        command(control, "status");
        command(control, "ping");
        command(control, "serve");
        command(control, "drain"); // with no connection left, the proxy stops: ProxyMain exits 0
        if (!host.waitFor(START_MILLIS, TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException("the training proxy did not stop after drain");
        }
        if (host.exitValue() != 0) {
          throw new IllegalStateException(
              "the training proxy exited " + host.exitValue() + ": " + Files.readString(log));
        }
      } finally {
        host.destroyForcibly();
      }
    }
  }

  private static Path config(Path dir, String name, int port, int upstreamPort, boolean tls)
      throws IOException {
    Map<String, String> lines = new LinkedHashMap<>();
    lines.put("listen.port", Integer.toString(port));
    lines.put("upstream.host", "127.0.0.1");
    lines.put("upstream.port", Integer.toString(upstreamPort));
    lines.put("tls", Boolean.toString(tls));
    lines.put("tls.server-name", SERVER_NAME);
    lines.put("tls.ca-file", dir.resolve("ca.pem").toString());
    lines.put("control.socket", dir.resolve("control-" + name + ".sock").toString());
    StringBuilder text = new StringBuilder();
    lines.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
    Path file = dir.resolve(name + ".conf");
    Files.writeString(file, text);
    return file;
  }

  private static void awaitListening(Process host, int port, Path log) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_MILLIS);
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
        return;
      } catch (IOException notYet) {
        if (!host.isAlive() || System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the training proxy did not listen on " + port + ": " + Files.readString(log));
        }
        Thread.sleep(20);
      }
    }
  }

  /** {@value #CALLS} NFS READ calls, each answered with {@value #REPLY_BYTES} bytes. */
  private static void calls(int port) throws IOException {
    try (Socket client = new Socket()) {
      client.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      client.setSoTimeout(30_000);
      client.setTcpNoDelay(true);
      DataOutputStream out =
          new DataOutputStream(new java.io.BufferedOutputStream(client.getOutputStream()));
      DataInputStream in =
          new DataInputStream(new java.io.BufferedInputStream(client.getInputStream(), 65536));
      byte[] reply = new byte[REPLY_BYTES + 64];
      for (int xid = 1; xid <= CALLS; xid++) {
        out.writeInt(0x8000_0000 | 40);
        out.writeInt(xid);
        out.writeInt(0); // CALL
        out.writeInt(2);
        out.writeInt(100003);
        out.writeInt(4);
        out.writeInt(25); // READ
        out.writeLong(0); // cred AUTH_NONE
        out.writeLong(0); // verf AUTH_NONE
        out.flush();
        int length = in.readInt() & 0x7fff_ffff;
        in.readFully(reply, 0, length);
      }
    }
  }

  private static void command(Path socket, String command) throws IOException {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(socket));
      ch.write(ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.UTF_8)));
      InputStream in = java.nio.channels.Channels.newInputStream(ch);
      int c;
      do {
        c = in.read();
      } while (c != '\n' && c != -1);
    }
  }
}

package io.efscsi.proxy.training;

import io.efscsi.proxy.ProxyServer;
import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.tls.TlsContexts;
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
import java.nio.file.Path;
import java.util.Map;

/**
 * Build time only: the workload {@code bin/efs-csi train} runs under {@code -XX:AOTMode=record} so
 * that the proxy's AOT cache ({@code lib/proxy/proxy.aot}) holds the classes a real session loads:
 * the TLS handshake through BoringSSL, BindClientToPartition, RPC records both ways, and the
 * control socket's status, ping, serve and drain. Everything stays on loopback: {@link
 * TrainingUpstream} plays the mount target.
 *
 * <p>Usage: {@code ProxyTraining <dir>} where dir holds {@code server.p12} (password {@code
 * training}) and {@code ca.pem}, made by keytool for {@link #SERVER_NAME}.
 */
public final class ProxyTraining {

  static final String SERVER_NAME = "fs-00000000.efs.training.invalid";
  private static final int REPLY_BYTES = 256 * 1024;
  private static final int CALLS = 400;

  private ProxyTraining() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    try (TrainingUpstream tls = TrainingUpstream.start(dir.resolve("server.p12"), REPLY_BYTES);
        TrainingUpstream plain = TrainingUpstream.start(null, REPLY_BYTES)) {
      session(dir, tls.port(), true);
      session(dir, plain.port(), false);
    }
  }

  private static void session(Path dir, int upstreamPort, boolean tls) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path control = dir.resolve("control-" + port + ".sock");
    ProxyConfig config =
        ProxyConfig.fromMap(
            Map.of(
                "listen.port", Integer.toString(port),
                "upstream.host", "127.0.0.1",
                "upstream.port", Integer.toString(upstreamPort),
                "tls", Boolean.toString(tls),
                "tls.server-name", SERVER_NAME,
                "tls.ca-file", dir.resolve("ca.pem").toString(),
                "control.socket", control.toString()));
    try (ProxyServer server = ProxyServer.start(config, tls ? new TlsContexts(config) : null)) {
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
      command(control, "status");
      command(control, "ping");
      command(control, "serve");
      command(control, "drain"); // a handover's last step, as far as it goes without a new proxy
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

package io.efscsi.proxy;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An NFS server stand-in on loopback: reads ONC RPC records and answers each call with an accepted
 * SUCCESS reply carrying the call's xid, after {@code delayMillis}, or never when it is negative.
 * Counts the connections and the calls it got.
 */
final class RpcUpstream implements AutoCloseable {

  final ServerSocket server;
  final AtomicInteger connections = new AtomicInteger();
  final AtomicInteger calls = new AtomicInteger();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

  RpcUpstream(long delayMillis) throws Exception {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual()
        .start(() -> {
          while (!server.isClosed()) {
            try {
              Socket s = server.accept();
              connections.incrementAndGet();
              Thread.ofVirtual().start(() -> serve(s, delayMillis));
            } catch (Exception e) {
              return;
            }
          }
        });
  }

  int port() {
    return server.getLocalPort();
  }

  private void serve(Socket s, long delayMillis) {
    try (s) {
      DataInputStream in = new DataInputStream(s.getInputStream());
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      while (true) {
        int length = in.readInt() & 0x7fff_ffff;
        byte[] body = new byte[length];
        in.readFully(body);
        calls.incrementAndGet();
        int xid = ByteBuffer.wrap(body).getInt();
        if (delayMillis >= 0) {
          timer.schedule(() -> reply(out, xid), delayMillis, TimeUnit.MILLISECONDS);
        }
      }
    } catch (EOFException e) {
      // the proxy closed the connection
    } catch (Exception e) {
      // the same, less politely
    }
  }

  private static void reply(DataOutputStream out, int xid) {
    try {
      synchronized (out) {
        out.write(reply(xid));
        out.flush();
      }
    } catch (Exception e) {
      // the connection is gone: the reply is lost, as a server's would be
    }
  }

  /** An accepted SUCCESS reply to {@code xid}, record mark included. */
  static byte[] reply(int xid) {
    return ByteBuffer.allocate(28)
        .putInt(0x8000_0000 | 24)
        .putInt(xid)
        .putInt(1) // REPLY
        .putInt(0) // MSG_ACCEPTED
        .putInt(0)
        .putInt(0) // verifier AUTH_NONE
        .putInt(0) // SUCCESS
        .array();
  }

  /** An NFSv4 NULL call with {@code xid}, record mark included, as the kernel sends it. */
  static byte[] call(int xid) {
    return ByteBuffer.allocate(44)
        .putInt(0x8000_0000 | 40)
        .putInt(xid)
        .putInt(0) // CALL
        .putInt(2)
        .putInt(100003)
        .putInt(4)
        .putInt(0)
        .putInt(0)
        .putInt(0) // cred AUTH_NONE
        .putInt(0)
        .putInt(0) // verf AUTH_NONE
        .array();
  }

  @Override
  public void close() throws Exception {
    server.close();
    timer.shutdownNow();
  }
}

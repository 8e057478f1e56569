package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import javax.net.ssl.KeyManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The proxy's TLS handler encrypts a large write in wraps of {@link UpstreamConnector#WRAP_BYTES}.
 */
class TlsWrapTest {

  @TempDir Path dir;

  @Test
  void aLargeWriteLeavesInBuffersOfFourRecordsThatTheServerDecryptsWhole() throws Exception {
    EmbeddedChannel client =
        new EmbeddedChannel(
            UpstreamConnector.batched(
                SslContextBuilder.forClient()
                    .sslProvider(SslProvider.OPENSSL)
                    .trustManager(InsecureTrustManagerFactory.INSTANCE)
                    .build()
                    .newHandler(Unpooled.buffer().alloc())));
    EmbeddedChannel server = new EmbeddedChannel(serverContext().newHandler(client.alloc()));
    try {
      SslHandler tls = client.pipeline().get(SslHandler.class);
      for (int i = 0; i < 50 && !tls.handshakeFuture().isDone(); i++) {
        shuttle(client, server);
        shuttle(server, client);
      }
      assertTrue(tls.handshakeFuture().isSuccess(), "handshake: " + tls.handshakeFuture().cause());
      shuttle(client, server);
      shuttle(server, client);
      drain(server.inboundMessages());

      byte[] data = new byte[256 * 1024];
      ThreadLocalRandom.current().nextBytes(data);
      client.writeAndFlush(Unpooled.directBuffer(data.length).writeBytes(data));
      int buffers = client.outboundMessages().size();
      assertEquals(data.length / UpstreamConnector.WRAP_BYTES, buffers, "one buffer per wrap");

      shuttle(client, server);
      ByteBuf plain = Unpooled.buffer(data.length);
      for (Object m : drain(server.inboundMessages())) {
        plain.writeBytes((ByteBuf) m);
        ((ByteBuf) m).release();
      }
      byte[] got = new byte[plain.readableBytes()];
      plain.readBytes(got);
      assertArrayEquals(data, got);
    } finally {
      client.finishAndReleaseAll();
      server.finishAndReleaseAll();
    }
  }

  private static void shuttle(EmbeddedChannel from, EmbeddedChannel to) {
    from.runPendingTasks();
    for (Object m : drain(from.outboundMessages())) {
      to.writeInbound(m);
    }
    to.runPendingTasks();
  }

  private static List<Object> drain(java.util.Queue<Object> q) {
    List<Object> out = new java.util.ArrayList<>(q);
    q.clear();
    return out;
  }

  /** A server context with a self-signed key made by the JDK's keytool. */
  private SslContext serverContext() throws Exception {
    Path store = dir.resolve("server.p12");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-keystore",
                store.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                "changeit",
                "-alias",
                "server",
                "-keyalg",
                "EC",
                "-dname",
                "CN=fs-1.efs.us-east-1.amazonaws.com")
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), "keytool: " + output);
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    return SslContextBuilder.forServer(kmf).sslProvider(SslProvider.OPENSSL).build();
  }
}

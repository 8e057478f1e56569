package io.efscsi.supervisor.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Talks to a proxy's control socket ({@code status}, {@code ping}): one line out, one line back,
 * bounded by a deadline. A hung proxy cannot hold up the caller.
 */
public final class ControlClient {

  private ControlClient() {}

  /**
   * The process took the request but did not answer in time: it may be hung, or only slow (a
   * refused or closed socket is a plain {@link IOException}).
   */
  public static final class Unanswered extends IOException {
    public Unanswered(String message) {
      super(message);
    }
  }

  /** Sends one command and returns the answer line; throws on error, timeout or close. */
  public static String ask(Path socket, String command, Duration timeout) throws IOException {
    SocketChannel ch = SocketChannel.open(java.net.StandardProtocolFamily.UNIX);
    CompletableFuture<String> answer = new CompletableFuture<>();
    Thread.ofVirtual()
        .start(() -> {
          try {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.US_ASCII)));
            answer.complete(readLine(ch));
          } catch (IOException | RuntimeException e) {
            answer.completeExceptionally(e);
          }
        });
    try {
      return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new Unanswered(
          "control socket "
              + socket
              + " did not answer '"
              + command
              + "' within "
              + timeout.toMillis()
              + " ms");
    } catch (ExecutionException e) {
      throw new IOException(
          "control socket " + socket + ": " + e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted asking " + socket, e);
    } finally {
      ch.close();
    }
  }

  private static String readLine(SocketChannel ch) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteBuffer buf = ByteBuffer.allocate(4096);
    while (out.size() < 1 << 20) {
      buf.clear();
      int n = ch.read(buf);
      if (n < 0) {
        break;
      }
      for (int i = 0; i < n; i++) {
        byte b = buf.get(i);
        if (b == '\n') {
          return out.toString(StandardCharsets.UTF_8);
        }
        out.write(b);
      }
    }
    if (out.size() == 0) {
      throw new IOException("closed without an answer");
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}

package io.efscsi.proxy.probe;

import io.efscsi.proxy.NullPing;
import io.efscsi.proxy.ProxyMetrics;
import io.efscsi.proxy.UpstreamConnector;
import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.tls.TlsContexts;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One NFS NULL call to a proxy's mount target the way the proxy reaches it (address, TLS name, CA,
 * client certificate, partition bind), made outside the proxy: the supervisor's own probe, which
 * tells a broken proxy from an unreachable mount target. Blocking; the call gets an event loop of
 * its own, shut down before this returns.
 */
public final class UpstreamPing {

  private UpstreamPing() {}

  /**
   * The answer's text ({@code ok <ms>}).
   *
   * @throws IOException why the target could not be reached or did not answer in {@code timeout}
   */
  public static String once(ProxyConfig config, Duration timeout) throws IOException {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    try {
      TlsContexts tls = config.tls() ? new TlsContexts(config) : null;
      byte[] identifier = new byte[16];
      ThreadLocalRandom.current().nextBytes(identifier);
      UpstreamConnector connector =
          new UpstreamConnector(config, tls, new ProxyMetrics(), identifier);
      Future<String> answer = NullPing.run(connector, group.next(), timeout.toMillis());
      if (!answer.await(timeout.toMillis() + 1_000)) {
        throw new IOException("no answer within " + timeout.toMillis() + " ms");
      }
      if (answer.isSuccess()) {
        return answer.getNow();
      }
      Throwable cause = answer.cause();
      throw new IOException(String.valueOf(cause.getMessage()), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }
}

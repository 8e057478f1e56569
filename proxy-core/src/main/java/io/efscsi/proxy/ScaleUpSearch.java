package io.efscsi.proxy;

import io.efscsi.proxy.rpc.PartitionBinding;
import java.util.Arrays;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One scale-up of a {@link ClientSession}, as efs-utils searches (connections.rs): up to 3
 * connection attempts at a time, each a new connection with the same identifier and incarnation.
 * READY on this partition: the connection joins the round-robin at once. RETRY, PREFERRED, READY on
 * another partition, or a connection that failed (but not a TLS failure): dropped and tried again.
 * RETRY_LATER, ERROR, a server that no longer knows the bind RPC, or a TLS failure: the search
 * stops, the scale-up config of the reply is adopted. At most 120 attempts and 15 s; when nothing
 * was added, no new search for 5 minutes. (efs-proxy would move the whole incarnation to another
 * partition that filled up first; this proxy stays on the partition it has.) Runs on the session's
 * event loop.
 */
final class ScaleUpSearch {

  private static final Logger log = LoggerFactory.getLogger(ScaleUpSearch.class);

  private static final int CONCURRENCY = 3;
  private static final int MAX_ATTEMPTS = 120;
  private static final long TIMEOUT_SECONDS = 15;

  private final ClientSession session;
  private final ClientSession.Connector connector;
  private final ProxyMetrics metrics;
  private int inFlight;
  private int attempts;
  private boolean over;
  private ScheduledFuture<?> deadline;

  ScaleUpSearch(ClientSession session, ClientSession.Connector connector, ProxyMetrics metrics) {
    this.session = session;
    this.connector = connector;
    this.metrics = metrics;
  }

  void start() {
    deadline =
        session
            .client()
            .eventLoop()
            .schedule(
                () -> finish("no more connections within 15 s"), TIMEOUT_SECONDS, TimeUnit.SECONDS);
    launch();
  }

  /** Keeps up to 3 attempts running while connections are missing. */
  private void launch() {
    while (!over
        && inFlight < Math.min(CONCURRENCY, session.connectionLimit() - session.upstreamCount())) {
      if (attempts >= MAX_ATTEMPTS) {
        if (inFlight == 0) {
          finish("gave up after " + attempts + " attempts");
        }
        return;
      }
      attempts++;
      inFlight++;
      metrics.scaleUpAttempts.increment();
      connector
          .connect(session.client().eventLoop(), session.incarnation())
          .addListener(this::attempted);
    }
    if (!over && inFlight == 0) {
      finish(null);
    }
  }

  private void attempted(io.netty.util.concurrent.Future<?> f) {
    inFlight--;
    long incarnation = session.incarnation();
    if (!f.isSuccess()) {
      if (!over && f.cause() instanceof UpstreamConnector.TlsFailedException) {
        finish(f.cause().getMessage());
      } else {
        log.debug(
            "incarnation {}: scale-up attempt failed: {}", incarnation, f.cause().getMessage());
        launch();
      }
      return;
    }
    UpstreamConnector.Upstream up = (UpstreamConnector.Upstream) f.getNow();
    if (over || !session.client().isActive()) {
      up.channel().close();
      return;
    }
    switch (up.bind()) {
      case PartitionBinding.Reply.Bound b
          when b.ready() && Arrays.equals(b.partitionId(), session.partition()) -> {
        session.joined(up.channel(), b.scaleUp());
        launch();
      }
      case PartitionBinding.Reply.Bound b -> tryAgain(up);
      case PartitionBinding.Reply.Retry r when !r.later() -> tryAgain(up);
      default -> {
        up.channel().close();
        session.adopt(up.bind().scaleUp());
        finish("the server answered " + ClientSession.describe(up.bind()));
      }
    }
  }

  /** A connection that cannot join (another partition, PREFERRED, RETRY): drop it, try another. */
  private void tryAgain(UpstreamConnector.Upstream up) {
    log.debug(
        "incarnation {}: scale-up attempt got {}; trying again",
        session.incarnation(),
        ClientSession.describe(up.bind()));
    up.channel().close();
    launch();
  }

  private void finish(String why) {
    if (over) {
      return;
    }
    over = true;
    deadline.cancel(false);
    session.searchFinished();
    if (session.client().isActive()) {
      log.info(
          "incarnation {}: {} upstream connections{}",
          session.incarnation(),
          session.upstreamCount(),
          why == null ? "" : " (scale-up stopped: " + why + ")");
    }
  }
}

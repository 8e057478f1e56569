package io.efscsi.proxy;

import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * While the upstream is unreachable the proxy's port refuses connections instead of accepting them
 * and closing them at once; it probes the upstream itself and listens again when the probe
 * succeeds.
 *
 * <p>Why: an NFSv4 call on a soft mount fails at its major timeout only if the transport is
 * disconnected at that instant (the kernel's {@code rpc_check_timeout}). Accepted-then-closed
 * connections make the kernel reconnect at once, some hundred times a second, so it is connected at
 * a random share of those instants and the call met EIO after k major timeouts, k from 1 to 7 (the
 * kernel VM suite's scenario 6: 16 s to 106 s for timeo=50,retrans=2). A refused connection leaves
 * the transport down, so the first major timeout fails the call, and the kernel paces its
 * reconnects instead of storming.
 *
 * <p>The port is never let go: the listening socket stays bound while it refuses (Linux stops a
 * listener on {@code shutdown(SHUT_RD)} and resumes on {@code listen(2)}), and {@code SO_REUSEADDR}
 * is off meanwhile, so no other socket can bind the port, with or without that option, and take the
 * kernel's reconnects. The listener leaves the event loop while it refuses, so the loop never sees
 * it in its stopped state.
 *
 * <p>{@code shutdown(2)} and {@code listen(2)} act on the socket, not on this process's descriptor:
 * while another process holds the same listening socket (a rolling upgrade hands it from one proxy
 * to the next), they stop and start it for both. So a proxy that hands its port over {@link
 * #detach}es its gate first.
 *
 * <p>If refusing is impossible (the call fails), the proxy keeps the old behaviour and says so
 * once. If listening again fails {@link #MAX_RELISTEN_FAILURES} times running, {@code giveUp} runs:
 * the process exits and its supervisor starts a new one on the port.
 */
final class ListenerGate {

  private static final Logger log = LoggerFactory.getLogger(ListenerGate.class);

  static final int MAX_RELISTEN_FAILURES = 3;

  private final EpollServerSocketChannel listener;
  private final EventLoop loop;
  private final int backlog;
  private final Supplier<Future<?>> probe;
  private final UpstreamOutage outage;
  private final long probeEveryMillis;
  private final Runnable giveUp;
  private volatile boolean closedPort;
  private volatile long refusals;
  // confined to the loop
  private boolean refusing;
  private boolean unsupported;
  private boolean closed;
  private int relistenFailures;

  /**
   * @param probe one attempt at the upstream (what a kernel connection would need), completed
   *     either way
   */
  ListenerGate(
      EpollServerSocketChannel listener,
      int backlog,
      Supplier<Future<?>> probe,
      UpstreamOutage outage,
      long probeEveryMillis,
      Runnable giveUp) {
    this.listener = listener;
    this.loop = listener.eventLoop();
    this.backlog = backlog;
    this.probe = probe;
    this.outage = outage;
    this.probeEveryMillis = probeEveryMillis;
    this.giveUp = giveUp;
  }

  /** The upstream has just become unreachable: stop accepting until a probe gets through. */
  void upstreamDown() {
    loop.execute(this::refuse);
  }

  /** Whether the port refuses connections now (read on any thread: a snapshot). */
  boolean refusing() {
    return closedPort;
  }

  /** How many times the port has started refusing. */
  long refusals() {
    return refusals;
  }

  /**
   * Closes the gate for good: no probe, and never again {@code shutdown(2)} or {@code listen(2)} on
   * the listening socket, whose listen state may now belong to another process holding the same
   * socket (a proxy handing its port over, or one closed by SIGTERM). Takes effect at once on the
   * event loop, otherwise in a task queued on the loop. The listener is closed by its owner.
   */
  void detach() {
    if (loop.inEventLoop()) {
      closed = true;
    } else {
      loop.execute(() -> closed = true);
    }
  }

  private void refuse() {
    if (refusing || unsupported || closed || !listener.isOpen()) {
      return;
    }
    refusing = true;
    listener
        .deregister()
        .addListener(f -> {
          if (!f.isSuccess()) {
            log.warn("cannot take the listener off the event loop: {}", f.cause().toString());
            refusing = false;
            return;
          }
          if (closed) {
            return; // detached meanwhile: the socket's listen state is not ours to change
          }
          try {
            ListenShutdown.stopListening(fd());
          } catch (IOException | RuntimeException e) {
            unsupported = true;
            log.warn(
                "cannot refuse connections while the upstream is unreachable ({}); accepting and"
                    + " closing them instead",
                e.getMessage());
            register();
            return;
          }
          try {
            listener.config().setOption(ChannelOption.SO_REUSEADDR, false);
          } catch (RuntimeException e) {
            log.warn(
                "cannot turn SO_REUSEADDR off while refusing ({}): a socket with that option could"
                    + " bind the port meanwhile",
                e.getMessage());
          }
          closedPort = true;
          refusals++;
          log.info(
              "refusing connections on {} until the upstream answers again (probing every {} ms)",
              listener.localAddress(),
              probeEveryMillis);
          scheduleProbe();
        });
  }

  private void scheduleProbe() {
    loop.schedule(this::probeOnce, probeEveryMillis, TimeUnit.MILLISECONDS);
  }

  private void probeOnce() {
    if (closed || !listener.isOpen()) {
      return;
    }
    probe
        .get()
        .addListener(f ->
            loop.execute(() -> {
              if (!f.isSuccess()) {
                outage.failed(String.valueOf(f.cause().getMessage()));
                scheduleProbe();
                return;
              }
              outage.succeeded();
              relisten();
            }));
  }

  private void relisten() {
    if (closed || !listener.isOpen()) {
      return;
    }
    try {
      // on while listening, so sockets it accepts may share the port with a later listen(2)
      listener.config().setOption(ChannelOption.SO_REUSEADDR, true);
      ((io.netty.channel.unix.Socket) listener.fd()).listen(backlog);
    } catch (IOException | RuntimeException e) {
      relistenFailures++;
      log.error(
          "cannot listen on {} again ({} of {}): {}",
          listener.localAddress(),
          relistenFailures,
          MAX_RELISTEN_FAILURES,
          e.getMessage());
      if (relistenFailures >= MAX_RELISTEN_FAILURES) {
        giveUp.run();
      } else {
        scheduleProbe();
      }
      return;
    }
    relistenFailures = 0;
    refusing = false;
    closedPort = false;
    register();
    log.info("accepting connections on {} again", listener.localAddress());
  }

  private void register() {
    loop.register(listener)
        .addListener(f -> {
          if (!f.isSuccess()) {
            log.error("cannot put the listener back on the event loop: {}", f.cause().toString());
            giveUp.run();
          }
        });
  }

  private int fd() {
    return listener.fd().intValue();
  }
}

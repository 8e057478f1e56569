package io.efscsi.proxy;

import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's part in a rolling upgrade, where a proxy of the new release takes over the port of a
 * running one. The supervisor duplicates the running proxy's listening socket into the new proxy,
 * which starts in <em>standby</em>: it accepts nothing (the kernel queues connections in the
 * socket's backlog) until {@code serve}. The old proxy is then stopped; closing it closes only its
 * own descriptor of the socket (close(2), never shutdown(2)), so the socket keeps listening through
 * the new proxy's descriptor. A proxy that bound the port itself serves from the start.
 *
 * <p>Everything runs on the listener's event loop; the state is also read by {@code status}.
 */
final class Handover {

  private static final Logger log = LoggerFactory.getLogger(Handover.class);

  private enum State {
    STANDBY,
    SERVING
  }

  private final EpollServerSocketChannel listener;
  private final EventLoop loop;
  private final int backlog;
  private final ListenerGate gate;
  private final Consumer<ProxyServer.Stop> stop;
  private volatile State state;
  private ScheduledFuture<?> standbyTimer;

  /**
   * @param serving false for a proxy on an inherited listener, which waits for {@code serve}
   * @param stop told when its standby ran out
   */
  Handover(
      EpollServerSocketChannel listener,
      int backlog,
      ListenerGate gate,
      boolean serving,
      Consumer<ProxyServer.Stop> stop) {
    this.listener = listener;
    this.loop = listener.eventLoop();
    this.backlog = backlog;
    this.gate = gate;
    this.state = serving ? State.SERVING : State.STANDBY;
    this.stop = stop;
  }

  /** Ends a standby that gets no {@code serve} within {@code timeout}: the process exits. */
  void expireStandby(Duration timeout) {
    loop.execute(() -> {
      if (state != State.STANDBY) {
        return;
      }
      standbyTimer =
          loop.schedule(
              () -> {
                if (state == State.STANDBY) {
                  log.warn(
                      "no serve command within {} ms on the inherited listener (fd {}); exiting"
                          + " and leaving the port to the descriptor's other holders",
                      timeout.toMillis(),
                      ListenerSocket.fd(listener));
                  stop.accept(ProxyServer.Stop.STANDBY_EXPIRED);
                }
              },
              timeout.toMillis(),
              TimeUnit.MILLISECONDS);
    });
  }

  /** Whether the proxy accepts the port's connections (false in standby). */
  boolean serving() {
    return state == State.SERVING;
  }

  /**
   * {@code serve}: accept from now on. If the socket does not listen (another holder's {@link
   * ListenerGate} stopped it during an outage), listen again first. A second {@code serve} checks
   * that again.
   */
  Future<String> serve() {
    return onLoop(() -> {
      if (!listener.isOpen()) {
        return "error the listener is closed";
      }
      cancelStandby();
      if (!gate.refusing()) { // else our own outage: our gate listens again when it may
        try {
          if (!ListenerSocket.listening(listener)) {
            ListenerSocket.listenAgain(listener, backlog);
            log.info("{} was not listening (stopped by another holder); listening again", where());
          }
        } catch (IOException e) {
          return "error cannot listen on " + where() + " again: " + e.getMessage();
        }
      }
      boolean wasServing = state == State.SERVING;
      state = State.SERVING;
      listener.config().setAutoRead(true);
      if (listener.isRegistered()) {
        listener.read();
      }
      if (!wasServing) {
        log.info("serving {}", where());
      }
      return "ok serving";
    });
  }

  private void cancelStandby() {
    if (standbyTimer != null) {
      standbyTimer.cancel(false);
      standbyTimer = null;
    }
  }

  private String where() {
    return "127.0.0.1:"
        + (listener.localAddress() == null ? "?" : listener.localAddress().getPort());
  }

  private Future<String> onLoop(Callable<String> command) {
    if (loop.inEventLoop()) {
      try {
        return loop.newSucceededFuture(command.call());
      } catch (Exception e) {
        return loop.newFailedFuture(e);
      }
    }
    return loop.submit(command);
  }
}

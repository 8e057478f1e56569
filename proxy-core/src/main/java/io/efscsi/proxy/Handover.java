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
 * socket's backlog) until {@code serve}. The old proxy is then told {@code drain}: it closes its
 * own descriptor of the socket (close(2) only, so the socket keeps listening through the new
 * proxy's descriptor), relays the replies its kernel connections still wait for, ends them with a
 * FIN and exits. A proxy that bound the port itself serves from the start.
 *
 * <p>A handback to the Go driver (efs-utils' watchdog starts its own tunnel on the port) has no
 * shared descriptor: the proxy is told {@code release}, closes its listening socket so that the
 * port is free to bind, and goes on serving its kernel connections; once the other tunnel listens,
 * {@code drain} ends them and the kernel reconnects to it.
 *
 * <p>Everything runs on the listener's event loop; the state is also read by {@code status}.
 */
final class Handover {

  private static final Logger log = LoggerFactory.getLogger(Handover.class);

  /** The longest a draining proxy waits for the replies its kernel connections are due. */
  static final long DRAIN_MILLIS = 2_000;

  private enum State {
    STANDBY,
    SERVING,
    RELEASED,
    DRAINING
  }

  private final EpollServerSocketChannel listener;
  private final EventLoop loop;
  private final int backlog;
  private final ListenerGate gate;
  private final Sessions sessions;
  private final Consumer<ProxyServer.Stop> stop;
  private volatile State state;
  private ScheduledFuture<?> standbyTimer;

  /**
   * @param serving false for a proxy on an inherited listener, which waits for {@code serve}
   * @param stop told when the proxy has drained or its standby ran out
   */
  Handover(
      EpollServerSocketChannel listener,
      int backlog,
      ListenerGate gate,
      Sessions sessions,
      boolean serving,
      Consumer<ProxyServer.Stop> stop) {
    this.listener = listener;
    this.loop = listener.eventLoop();
    this.backlog = backlog;
    this.gate = gate;
    this.sessions = sessions;
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

  /** Whether the proxy accepts the port's connections (false in standby and while draining). */
  boolean serving() {
    return state == State.SERVING;
  }

  boolean draining() {
    return state == State.DRAINING;
  }

  /** Whether the port was let go ({@code release}) and the kernel connections are still served. */
  boolean released() {
    return state == State.RELEASED;
  }

  /**
   * {@code serve}: accept from now on. If the socket does not listen (another holder's {@link
   * ListenerGate} stopped it during an outage), listen again first. A second {@code serve} checks
   * that again.
   */
  Future<String> serve() {
    return onLoop(() -> {
      if (state == State.DRAINING || state == State.RELEASED) {
        return "error "
            + state.name().toLowerCase(java.util.Locale.ROOT)
            + ": this proxy has handed its port over and will not serve again";
      }
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

  /**
   * {@code drain}: answers {@code ok draining <n>} (n live kernel connections), then closes this
   * process's descriptor of the listening socket (never {@code shutdown(2)}: the socket keeps
   * listening for the other holders), lets each kernel connection get the replies it is due for up
   * to {@link #DRAIN_MILLIS}, ends it with a FIN, and tells {@code stop} {@link
   * ProxyServer.Stop#DRAINED} once all are closed. A second {@code drain} only answers.
   */
  Future<String> drain() {
    return onLoop(() -> {
      int live = sessions.size();
      if (state == State.DRAINING) {
        return "ok draining " + live;
      }
      boolean released = state == State.RELEASED;
      state = State.DRAINING;
      cancelStandby();
      gate.detach();
      if (released) {
        log.info(
            "draining: the port was released before; {} kernel connections get their replies for"
                + " up to {} ms",
            live,
            DRAIN_MILLIS);
      } else {
        String where = where();
        int fd = ListenerSocket.fd(listener);
        listener.close();
        log.info(
            "draining: closed fd {} of {} (the socket keeps listening for its other holders); {}"
                + " kernel connections get their replies for up to {} ms",
            fd,
            where,
            live,
            DRAIN_MILLIS);
      }
      sessions
          .drain(loop, DRAIN_MILLIS)
          // after this task, so that the answer is written before the process stops
          .addListener(f -> loop.execute(() -> stop.accept(ProxyServer.Stop.DRAINED)));
      return "ok draining " + live;
    });
  }

  /**
   * {@code release}: answers {@code ok released <n>} (n live kernel connections) and closes the
   * listening socket, so that another program can bind the port; the kernel connections are still
   * served until {@code drain}. Refused in standby (the socket is shared: {@code drain} is the way
   * out there); a second {@code release} only answers.
   */
  Future<String> release() {
    return onLoop(() -> {
      int live = sessions.size();
      switch (state) {
        case RELEASED -> {
          return "ok released " + live;
        }
        case DRAINING -> {
          return "error draining: the port is already handed over";
        }
        case STANDBY -> {
          return "error standby: the listener is shared with another proxy; drain instead";
        }
        case SERVING -> {
          // released below
        }
      }
      String where = where();
      int fd = ListenerSocket.fd(listener);
      state = State.RELEASED;
      gate.detach();
      listener.close();
      log.info(
          "released {} (closed fd {}): the port is free for another tunnel; {} kernel connections"
              + " are still served until drain",
          where,
          fd,
          live);
      return "ok released " + live;
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

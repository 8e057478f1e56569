package io.efscsi.proxy;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The live kernel connections of one proxy, so that a drain reaches each of them. A session is in
 * the set from its channel's activation to its close, so the set is bounded by the open kernel
 * connections. Confined to the proxy's event loop.
 */
final class Sessions {

  private final Set<ClientSession> live = new LinkedHashSet<>();
  private Promise<Void> drained;

  void opened(ClientSession s) {
    live.add(s);
    if (drained != null) {
      s.drain(); // accepted just before the listener closed
    }
  }

  void closed(ClientSession s) {
    live.remove(s);
    if (drained != null && live.isEmpty()) {
      drained.trySuccess(null);
    }
  }

  int size() {
    return live.size();
  }

  /**
   * Drains every session: each stops reading its kernel connection and ends it (FIN) once the
   * replies still due are relayed; after {@code maxMillis} the rest are ended as they are.
   * Completes when every kernel connection is closed. A second call returns the same future.
   */
  Future<Void> drain(EventLoop loop, long maxMillis) {
    if (drained != null) {
      return drained;
    }
    drained = loop.newPromise();
    if (live.isEmpty()) {
      drained.trySuccess(null);
      return drained;
    }
    for (ClientSession s : List.copyOf(live)) {
      s.drain();
    }
    loop.schedule(
        () -> {
          for (ClientSession s : List.copyOf(live)) {
            s.closeClient();
          }
        },
        maxMillis,
        TimeUnit.MILLISECONDS);
    return drained;
  }
}

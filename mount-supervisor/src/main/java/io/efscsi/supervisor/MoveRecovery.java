package io.efscsi.supervisor;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link Adoption} does with a record whose {@link ProxyMove} a plugin's death interrupted,
 * before it adopts the proxy: one process per port is left, the one the record's phase says.
 */
final class MoveRecovery {

  private static final Logger LOG = LoggerFactory.getLogger(MoveRecovery.class);

  private MoveRecovery() {}

  /**
   * A move a plugin's death interrupted, finished or undone before adoption: {@code launching} (the
   * old process still serves) kills the successor and its group; {@code retiring} (the record names
   * the successor) retires the old process. Returns the record without its move.
   */
  static ProxyRecord recover(ProxyContext ctx, ProxyRecord r) {
    if (r.move().isEmpty()) {
      return r;
    }
    ProxyRecord.Move m = r.move().get();
    ProxyFiles files = new ProxyFiles(ctx.proxiesDir(), r.id(), ctx.config().logMaxBytes());
    Placement group = ctx.placer().existing(m.cgroup());
    if (m.launching()) {
      LOG.warn(
          "proxy for port {}: a move was starting when the plugin stopped; undoing it", r.port());
      if (m.pid() > 0) {
        ctx.processes().terminate(m.pid(), m.startTicks(), Duration.ofSeconds(2));
      }
      Adoption.killAll(group, ctx.processes(), "successor of port " + r.port());
      group.remove();
      files.deleteNext();
    } else {
      LOG.warn(
          "proxy for port {}: a move was ending when the plugin stopped; retiring pid {}",
          r.port(),
          m.pid());
      ctx.processes().terminate(m.pid(), m.startTicks(), ctx.config().stopTimeout());
      Adoption.killAll(group, ctx.processes(), "old group of port " + r.port());
      group.remove();
      java.nio.file.Path socket = files.nextControlSocket(ProxyMove.groupOf(r, r.cgroup()));
      try {
        if (Files.exists(socket)) {
          Files.move(
              socket,
              files.controlSocket(),
              StandardCopyOption.REPLACE_EXISTING,
              StandardCopyOption.ATOMIC_MOVE);
        }
        ProxyConfig.fromMap(r.config()).write(files.config());
      } catch (IOException e) {
        LOG.error("proxy for port {}: {}", r.port(), e.getMessage());
      }
      files.deleteNext();
    }
    return r.withMove(Optional.empty());
  }
}

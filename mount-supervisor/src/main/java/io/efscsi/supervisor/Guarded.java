package io.efscsi.supervisor;

import io.efscsi.supervisor.state.ProxyRecord;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one proxy's lock guards: its {@link Lifecycle} and its record, which the two must agree on
 * (a late exit, a stop and a move's commit see the same generation and the same process). It takes
 * no lock itself: every call is made holding the lock of the {@link Supervised} that owns it, also
 * from {@link MoveSteps}.
 */
final class Guarded {

  private static final Logger LOG = LoggerFactory.getLogger(Guarded.class);

  private final ProxyContext ctx;
  private final Lifecycle life = new Lifecycle();
  private ProxyRecord record;

  Guarded(ProxyContext ctx, ProxyRecord record) {
    this.ctx = ctx;
    this.record = record;
  }

  /** Puts {@code e} through the lifecycle: the actions it named, or empty when it was refused. */
  Optional<List<Lifecycle.Action>> on(Lifecycle.Event e) {
    return switch (life.on(e)) {
      case Lifecycle.Step.Moved m -> Optional.of(m.actions());
      case Lifecycle.Step.Refused r -> {
        LOG.debug("proxy for port {}: {} refused ({})", record.port(), e, r.why());
        yield Optional.empty();
      }
    };
  }

  Lifecycle life() {
    return life;
  }

  ProxyRecord record() {
    return record;
  }

  /** Changes the record in memory only (the launch writes it once the process is placed). */
  void set(ProxyRecord r) {
    record = r;
  }

  /** Changes the record and writes it to the state dir (a failed write is logged). */
  void write(ProxyRecord r) {
    record = r;
    write();
  }

  /** Writes the record as it is (a failed write is logged: the proxy serves on regardless). */
  void write() {
    try {
      ctx.owner().writeRecord(record);
    } catch (IOException e) {
      LOG.error("cannot write the state record of proxy {}: {}", record.id(), e.getMessage());
    }
  }
}

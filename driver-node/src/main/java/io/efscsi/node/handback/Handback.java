package io.efscsi.node.handback;

import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.handback.HandbackPlan.Idle;
import io.efscsi.node.handback.HandbackPlan.Refused;
import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.Handoff;
import io.efscsi.supervisor.host.MountTable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A rollback to the Go driver without draining the node: every mount our proxies serve gets the
 * efs-utils state its watchdog needs ({@link EfsUtilsFiles}); once our node plugin is gone (its
 * supervisor would restart what this stops) and the Go driver's watchdog has started polling a
 * mount's state, the port is handed over ({@link Handoff}) and our proxy's record removed, so that
 * a later roll forward takes the mount over from efs-utils again. What cannot be handed back is
 * listed before anything is written; a handback that the Go driver never comes to is undone.
 */
public final class Handback {

  /**
   * @param patience how long to wait for our node plugin to go and the watchdog to come
   * @param poll how often to look
   */
  public record Timing(
      Duration patience, Duration poll, Duration listenWait, Duration reconnectWait) {
    public static final Timing DEFAULT =
        new Timing(
            Duration.ofMinutes(30),
            Duration.ofMillis(100),
            Duration.ofSeconds(30),
            Duration.ofSeconds(10));
  }

  private final HandbackPlanner planner;
  private final EfsUtilsFiles files;
  private final Handoff handoff;
  private final MountTable table;
  private final Timing timing;
  private final PrintStream out;

  public Handback(
      HandbackPlanner planner,
      EfsUtilsFiles files,
      Handoff handoff,
      MountTable table,
      Timing timing,
      PrintStream out) {
    this.planner = planner;
    this.files = files;
    this.handoff = handoff;
    this.table = table;
    this.timing = timing;
    this.out = out;
  }

  public HandbackPlan plan() throws IOException {
    return planner.plan(handoff.proxies(), table.read());
  }

  /** Prints the plan; exit code 0 when all could be handed back, 1 when some would be refused. */
  public int dryRun() throws IOException {
    HandbackPlan plan = plan();
    print(plan);
    out.println(
        "dry run: nothing written. "
            + (plan.refused().isEmpty()
                ? "Every mount can be handed back."
                : plan.refused().size()
                    + " cannot be handed back; --go-on hands back the others and leaves these"
                    + " to our proxies, unsupervised (drain the node within 3 hours)."));
    return plan.refused().isEmpty() ? 0 : 1;
  }

  /**
   * The handback: 0 when every mount of the plan was handed over, 1 when any was not (refused
   * without {@code goOn}, or not taken by the Go driver in time: those are undone).
   */
  public int run(boolean goOn) throws IOException, InterruptedException {
    HandbackPlan plan = plan();
    print(plan);
    if (!plan.refused().isEmpty() && !goOn) {
      out.println(
          "not handing back: "
              + plan.refused().size()
              + " mount(s) cannot be (above). Nothing was written. --go-on hands back the"
              + " others and leaves these to our proxies, unsupervised (drain the node within 3"
              + " hours).");
      return 1;
    }
    Map<Integer, EfsUtilsFiles.Written> written = new LinkedHashMap<>();
    for (Handed h : plan.handed()) {
      try {
        EfsUtilsFiles.Written w = files.write(h);
        written.put(h.port(), w);
        out.printf("wrote efs-utils state %s (certificate: %s)%n", h.stem(), w.certificateSource());
      } catch (IOException | RuntimeException e) {
        out.printf("cannot write efs-utils' state for port %d: %s%n", h.port(), e.getMessage());
        undo(written);
        out.println("undone: nothing is handed back");
        return 1;
      }
    }
    long deadline = System.nanoTime() + timing.patience().toNanos();
    out.printf(
        "waiting up to %s for our node plugin to stop and the Go driver's watchdog to start"
            + " (helm rollback now)%n",
        spoken(timing.patience()));
    while (handoff.supervised()) {
      if (System.nanoTime() > deadline) {
        out.printf(
            "our node plugin still runs (it holds %s); the Go driver did not come: undoing%n",
            handoff.lockFile());
        undo(written);
        return 1;
      }
      Thread.sleep(timing.poll().toMillis());
    }
    out.println("our node plugin is gone");
    int failed = 0;
    for (Handed h : plan.handed()) {
      if (!awaitWatchdog(h, deadline)) {
        out.printf(
            "port %d: efs-utils' watchdog did not start %s in time; undone, our proxy serves on%n",
            h.port(), h.stem());
        written.get(h.port()).undo();
        failed++;
        continue;
      }
      Handoff.Result r = handoff.handOver(h.record(), timing.listenWait(), timing.reconnectWait());
      if (!r.handed()) {
        out.printf("port %d: not handed over: %s%n", h.port(), r.detail());
        failed++;
        continue;
      }
      out.printf(
          "handed back 127.0.0.1:%d (%s): %s; tunnel listening after %s, our proxy drained after"
              + " %d ms, kernel reconnected %s%n",
          h.port(),
          h.mountPoint(),
          r.detail(),
          r.tunnelListeningMs() < 0 ? "-" : r.tunnelListeningMs() + " ms",
          r.drainedMs(),
          r.reconnectedMs()
              .map(ms -> "after " + ms + " ms")
              .orElse("not yet (no I/O since: at its next request)"));
    }
    for (Idle i : plan.idle()) {
      stopIdle(i.record());
    }
    out.printf(
        "handback done: %d handed back, %d not, %d refused, %d idle stopped%n",
        plan.handed().size() - failed, failed, plan.refused().size(), plan.idle().size());
    return failed == 0 && plan.refused().isEmpty() ? 0 : 1;
  }

  /** "30 min", "90 s": a wait as the operator gave it, not rounded down to 0 min. */
  static String spoken(java.time.Duration d) {
    return d.toSecondsPart() == 0 && d.toMinutes() > 0
        ? d.toMinutes() + " min"
        : d.toSeconds() + " s";
  }

  /** The watchdog polled the state: it started a tunnel for it and recorded the pid. */
  private boolean awaitWatchdog(Handed h, long deadline) throws IOException, InterruptedException {
    Path state = files.stateFile(h);
    while (System.nanoTime() < deadline) {
      try {
        if (Json.parse(Files.readString(state).strip()) instanceof Map<?, ?> m
            && m.get("pid") != null) {
          return true;
        }
      } catch (NoSuchFileException gone) {
        return false;
      } catch (IllegalArgumentException halfWritten) {
        // efs-utils renames a whole file in place; a torn read is retried
      }
      Thread.sleep(timing.poll().toMillis());
    }
    return false;
  }

  private void stopIdle(Handoff.Held p) {
    try {
      handoff.stop(p);
      out.printf("stopped the idle proxy on 127.0.0.1:%d (no mount uses it)%n", p.port());
    } catch (IOException e) {
      out.printf("cannot stop the idle proxy on 127.0.0.1:%d: %s%n", p.port(), e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void undo(Map<Integer, EfsUtilsFiles.Written> written) {
    for (EfsUtilsFiles.Written w : written.values()) {
      try {
        w.undo();
      } catch (IOException e) {
        out.println("cannot undo a write: " + e.getMessage());
      }
    }
  }

  /** The plan as tables: what is handed back, idle, refused. */
  void print(HandbackPlan plan) {
    out.printf(
        "handback to %s of %d proxies: %d to hand back, %d idle, %d refused%n",
        plan.image().describe(),
        plan.handed().size() + plan.idle().size() + plan.refused().size(),
        plan.handed().size(),
        plan.idle().size(),
        plan.refused().size());
    if (!plan.handed().isEmpty()) {
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"PORT", "MOUNT POINT", "TUNNEL", "UPSTREAM", "CERTIFICATE"});
      for (Handed h : plan.handed()) {
        String mp =
            h.mountPoint()
                + (h.alsoOnPort().isEmpty() ? "" : " (+" + h.alsoOnPort().size() + " on the port)");
        rows.add(
            new String[] {
              Integer.toString(h.port()),
              mp,
              (h.tunnel().efsProxy() ? "efs-proxy" : "stunnel") + (h.tls() ? " tls" : ""),
              h.connect(),
              h.certificate().map(c -> files.certificateSource(c)).orElse("-")
            });
      }
      table(rows);
      for (Handed h : plan.handed()) {
        out.printf(
            "tunnel   127.0.0.1:%d: %s (CA: %s): %s%n",
            h.port(), h.tunnel().binary(), files.caSource(h), h.tunnel().why());
      }
    }
    for (Idle i : plan.idle()) {
      out.printf(
          "idle     127.0.0.1:%d: no mount uses it; stopped once the Go driver runs%n",
          i.record().port());
    }
    for (Refused r : plan.refused()) {
      out.printf(
          "refused  127.0.0.1:%d (%s): %s%n",
          r.record().port(), String.join(", ", r.mountPoints()), r.reason());
    }
  }

  private void table(List<String[]> rows) {
    int[] w = new int[rows.getFirst().length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        w[i] = Math.max(w[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < r.length; i++) {
        sb.append(i == r.length - 1 ? r[i] : String.format("%-" + w[i] + "s  ", r[i]));
      }
      out.println(sb.toString().stripTrailing());
    }
  }
}

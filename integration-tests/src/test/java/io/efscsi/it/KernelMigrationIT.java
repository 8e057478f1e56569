package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The way in and the way out between the Go driver and ours, on the kernel VM's real NFS client
 * (the same boot as {@link KernelReliabilityIT}): the Go driver's mounts taken over on their ports
 * (scenarios 8 and 9), and a rollback without draining, where they are handed back to efs-utils'
 * watchdog and taken over again (scenario 13), all under fsync'd writes.
 */
class KernelMigrationIT extends KernelVmFixture {

  @Test
  void s8_theGoDriversTlsMountIsTakenOverOnItsPortWithoutAnIoError() throws Exception {
    Facts f = facts("s8");
    String line = f.get("mount_line");
    f.that(
        line.contains("hard") && line.contains("port=20417") && line.contains("timeo=600"),
        "efs-utils' hard mount: " + line);
    f.eq("port_open_without_tunnel", "no");
    f.that(f.num("listening_after_start_ms") > 0, "the port listened again after our start");
    f.that(
        f.num("listening_after_kill_ms") < KernelVmFixture.SERVER_LEASE_MS,
        "the takeover gap stays below the server's NFSv4 lease (beyond it open state is lost on"
            + " any server, whoever serves the port)");
    f.eq("writer_stuck", "no");
    f.eq("io_err", "0");
    f.that(f.num("io_ok_before_kill") > 0, "writes went through the Go driver's tunnel");
    f.that(f.num("io_ok_after") > 0, "writes completed through our proxy");
    f.that(f.get("proxies").matches("20417:\\d+:alive"), "our proxy on the same port");
    f.that(f.get("record_key").startsWith("efs-utils:fs-12345678."), "a record of ours");
    f.eq("certificate_reused", "yes");
    f.eq("takeover_log", "1");
    f.eq("takeovers", "1");
    f.eq("unpublish", "ok unpublished");
    f.eq("unstage_never_staged", "ok unstaged");
    f.zeros("mounts_after", "records_after");
    f.eq("port_open_after", "no");
    f.eq("proxy_alive_after", "no");
    figure(
        "8. the Go driver's node pod replaced by ours with a live TLS mount (efs-utils 1.3x"
            + " state, stunnel on 20417, hard mount at the pod's target)",
        ("fsync'd 8 MiB writes: %d before the tunnel was killed, %d in the gap, %d after;"
                + " 0 I/O errors, the writer never restarted; port 20417 listened again %d ms"
                + " after our plugin's start (%d ms after the kill), the first write completed"
                + " %d ms later; efs-utils' certificate presented; NodeUnpublish through our"
                + " plugin leaves no mount, proxy or record")
            .formatted(
                f.num("io_ok_before_kill"),
                f.num("io_ok_gap"),
                f.num("io_ok_after"),
                f.num("listening_after_start_ms"),
                f.num("listening_after_kill_ms"),
                f.num("io_first_ok_after_listen_ms")),
        "no takeover: every existing mount loses its proxy with the old container; hard mounts"
            + " hang in D state until the node is drained");
  }

  @Test
  void s9_anAccessPointIamMountIsTakenOverAndUnreadableStateIsLeftAlone() throws Exception {
    Facts f = facts("s9");
    f.eq("port_a_open", "yes");
    f.eq("read_a", "before");
    f.eq("write_a_rc", "0");
    f.eq("certificate_reused", "yes");
    f.eq("record_bind", "awsfile-v3");
    f.eq("port_b_open", "no");
    f.eq("mounts_b", "1");
    f.eq("refused_log", "1");
    f.eq("refused_log_later", "1");
    f.that(f.get("refused_reason").contains("not JSON"), f.get("refused_reason"));
    f.eq("unpublish_a", "ok unpublished");
    f.zeros("mounts_a_after", "records_after");
    f.eq("proxy_alive_after", "no");
    figure(
        "9. access point + IAM mount (efs-utils 3.x state) and a torn state file",
        "taken over with efs-utils' own certificate (access point, IAM) and BindClientToPartition"
            + " v3; the torn one left alone with one log line naming the pod and the reason",
        "-");
  }

  /**
   * {@code handed back …: released; tunnel listening after N ms, …, kernel reconnected after M ms}
   */
  private static final Pattern HANDOVER =
      Pattern.compile(
          "tunnel listening after (\\d+) ms, our proxy drained after (\\d+) ms, kernel reconnected"
              + " (after (\\d+) ms|not yet)");

  @Test
  void s13_aRollbackHandsTheMountsBackToEfsUtilsWatchdogOnTheirPortsAndForwardAgain()
      throws Exception {
    Facts f = facts("s13");
    f.eq("taken_over", "2");
    // migration.md's checklist: one "took over" line per mount its grep counts before the upgrade
    // (here on top of what the VM's earlier scenarios left mounted)
    DocCommands.inline("migration.md", "grep -c 'addr=127.0.0.1' /proc/mounts");
    assertEquals(
        f.num("taken_over"), f.num("loopback_mounts_go") - f.num("loopback_mounts_before"));
    // the plan from the node pod: both mounts, nothing written
    f.eq("dry_rc", "0");
    f.eq("dry_rows", "2");
    f.eq("dry_unchanged", "yes");
    // the handback wrote efs-utils' state (no pid: the watchdog's cue) with the Go pod's identity
    f.eq("handback_waiting", "1");
    f.eq("state_pid_before_watchdog", "0");
    f.eq(
        "written_method",
        "podidentity:http://169.254.170.23/v1/credentials,"
            + "/var/run/secrets/pods.eks.amazonaws.com/serviceaccount/eks-pod-identity-token");
    f.eq("handback_rc", "0");
    f.eq("handed_back", "2");
    long[] reconnect = new long[2];
    int i = 0;
    for (String port : new String[] {"20617", "20618"}) {
      Matcher m = HANDOVER.matcher(f.get("handover_" + port));
      f.that(m.find(), "handed over with the port listening first: " + f.get("handover_" + port));
      f.that(
          Long.parseLong(m.group(1)) <= Long.parseLong(m.group(2)),
          "the watchdog's tunnel listened before our proxy let the kernel's connection go");
      // "not yet": the mount made no request in the 10 s the handback watches (a loaded host)
      reconnect[i] =
          m.group(4) == null ? -1 : Long.parseLong(m.group(4)) - Long.parseLong(m.group(2));
      i++;
    }
    f.eq("records_after_handback", "0");
    // efs-utils' own watchdog (3.2.0, unmodified) started both tunnels from the written states on
    // the Go driver's image layout: the command 1.3x recorded for mount a, /sbin/efs-proxy (what
    // mount.efs records there) for mount b; nothing it logged as an error, and it was still running
    // when stopped (a missing binary ends it with fatal_error)
    f.eq("watchdog_started", "/sbin/efs-proxy /usr/bin/stunnel");
    f.eq("watchdog_errors", "0");
    f.eq("watchdog_alive", "yes");
    f.eq("tunnels", "stunnel stunnel");
    // forward again: our takeover reads what the handback wrote and the watchdog rewrote
    f.eq("taken_again", "4");
    // mount a, made by efs-utils 1.3x with stunnel, went back as stunnel (its recorded command):
    // taken over again it speaks no binding; mount b (3.x efs-proxy) speaks 3.x's
    f.eq("record_bind_again", "awsfile-v3 none");
    for (String w : new String[] {"a", "b"}) {
      f.eq("writer_stuck_" + w, "no");
      f.that(f.num("io_err_" + w) == 0, "no I/O error: " + f.get("io_err_first_" + w));
      f.that(f.num("io_ok_handed_back_" + w) > 0, "writes went through the Go driver's tunnel");
    }
    f.eq("writer_restarts", "0");
    f.eq("unpublish_a", "ok unpublished");
    f.eq("unpublish_b", "ok unpublished");
    f.zeros("mounts_after", "records_after");
    figure(
        "13. a rollback without draining: a TLS mount (efs-utils 1.3x) and an access point + IAM"
            + " mount (3.x) taken over, handed back to efs-utils' watchdog for a 3.x Go driver (the"
            + " first with the stunnel command 1.3x recorded for it, the second as 3.x efs-proxy),"
            + " taken over"
            + " again",
        ("fsync'd 4 MiB writes on both the whole time: 0 I/O errors, the writers never restarted;"
                + " each port went to the watchdog's tunnel only once it listened (%s / %s), the"
                + " kernel reconnected %d / %d ms after our proxy let its connection go; longest"
                + " wait for a write around the handback %d / %d ms (around our takeovers, a"
                + " proxy's start under emulation: %d / %d ms, then %d / %d ms); %d / %d writes"
                + " through the Go driver's tunnels")
            .formatted(
                f.get("handover_20617").replaceFirst(", our proxy.*", ""),
                f.get("handover_20618").replaceFirst(", our proxy.*", ""),
                reconnect[0],
                reconnect[1],
                f.num("gap_handback_ms_a"),
                f.num("gap_handback_ms_b"),
                f.num("gap_takeover_ms_a"),
                f.num("gap_takeover_ms_b"),
                f.num("gap_forward_ms_a"),
                f.num("gap_forward_ms_b"),
                f.num("io_ok_handed_back_a"),
                f.num("io_ok_handed_back_b")),
        "no rollback path: after a rollback our proxies serve unsupervised and unrenewed; the"
            + " node is drained within 3 hours");
  }
}

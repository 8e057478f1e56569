package io.efscsi.node.handback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.takeover.EfsUtilsSamples;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.Handoff;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.state.StateStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The tunnel a handback names for each mount: where mount.efs finds it in the Go driver's image for
 * our own mounts, the command efs-utils recorded for a taken-over one (stunnel mode kept, its
 * tunnel config untouched); and what the files say besides (mount time, CA, 3.x's profile), and a
 * dry run that writes nothing.
 */
class HandbackTunnelTest extends HandbackFixture {

  @ParameterizedTest
  @CsvSource({
    "v1.7.7, /usr/bin/stunnel5, Amazon Linux 2",
    "v2.0.9, /sbin/efs-proxy, Amazon Linux 2",
    "v2.1.0, /sbin/efs-proxy, Amazon Linux 2",
    "v2.1.3, /sbin/efs-proxy, Amazon Linux 2023",
    "v2.1.4, /sbin/efs-proxy, Amazon Linux 2",
    "2.1.15, /sbin/efs-proxy, Amazon Linux 2023",
    "v3.4.1, /sbin/efs-proxy, Amazon Linux 2023"
  })
  void ownMountsGetTheTunnelMountEfsFindsInTheGoDriversImage(
      String goDriver, String binary, String base) throws Exception {
    GoDriverImage image = GoDriverImage.of(goDriver);
    assertEquals(base, image.base().toString());
    Held record =
        tlsRecord(Optional.of(EfsUtilsSamples.AP), true, IamCredentialsSource.DEFAULT_CHAIN);
    Handed h =
        imagePlanner(goDriver, Map.of())
            .plan(List.of(record), List.of(mount(10, STAGING, PORT)))
            .handed()
            .getFirst();
    String config = "/var/run/efs/stunnel-config." + h.stem();
    List<String> expected =
        switch (image.release()) {
          case V1 -> List.of(binary, config);
          case V2 -> List.of(binary, config, "--tls");
          case V3 -> List.of(binary, config, "--tls", "--no-direct-s3-read");
        };
    assertEquals(expected, h.tunnel().command());
    assertEquals(image.release().efsProxy(), h.tunnel().efsProxy());
    assertFalse(h.tunnel().configKept());
    assertTrue(h.tunnel().why().contains(base), h.tunnel().why());
    files(image.release()).write(h);
    Map<?, ?> state = state(h.stem());
    assertEquals(expected, state.get("cmd"), "the watchdog runs this as written");
  }

  @Test
  void theOperatorsTunnelBinaryIsWhatOwnMountsGet() throws Exception {
    Held record = tlsRecord(Optional.empty(), false, IamCredentialsSource.DEFAULT_CHAIN);
    Handed h =
        planner(EfsUtilsRelease.V3, Map.of())
            .plan(List.of(record), List.of(mount(10, STAGING, PORT)))
            .handed()
            .getFirst();
    assertEquals("/usr/bin/efs-proxy", h.tunnel().binary());
    assertEquals("given with --tunnel-binary (handback.tunnelBinary)", h.tunnel().why());
  }

  @Test
  void aTakenOverStunnelModeMountGoesBackWithItsRecordedCommandAndItsOwnTunnelConfig()
      throws Exception {
    // efs-utils 3.x mounted it with -o stunnel in the Go driver's image; we took it over
    EfsUtilsSamples made = new EfsUtilsSamples().release(EfsUtilsSamples.Release.V3_STUNNEL);
    made.port = PORT;
    made.caFile = "/etc/amazon/efs/efs-utils.crt";
    Held takenOver = takenOver(made, false, "none");
    Path config = dirs().stateDir().resolve("stunnel-config." + made.stem());
    FileTime before = Files.getLastModifiedTime(config);
    Handed h =
        imagePlanner("v3.4.1", Map.of())
            .plan(List.of(takenOver), List.of(mount(12, made.mountPoint, PORT)))
            .handed()
            .getFirst();
    assertEquals(made.command(), h.tunnel().command(), "exactly what efs-utils recorded");
    assertFalse(h.tunnel().efsProxy(), "stunnel mode kept");
    assertTrue(h.tunnel().configKept());
    files(EfsUtilsRelease.V3).write(h);
    assertEquals(made.command(), state(made.stem()).get("cmd"));
    assertEquals(
        made.config(), Files.readString(config), "its tunnel config as efs-utils wrote it");
    assertEquals(before, Files.getLastModifiedTime(config), "not even rewritten");
    assertTrue(made.config().contains("CAfile = /etc/amazon/efs/efs-utils.crt"));
    assertFalse(
        Files.exists(dirs().stateDir().resolve(made.stem() + "+/" + EfsUtilsFiles.CA_COPY)),
        "no frozen copy of the CA");
  }

  @Test
  void theStateRecordsWhenItWasWrittenAndTheCaByEfsUtilsOwnPath() throws Exception {
    Held tls = tlsRecord(Optional.empty(), false, IamCredentialsSource.DEFAULT_CHAIN);
    // a CA bundle in efs-utils' config dir (the one the Go driver links as /etc/amazon/efs)
    Files.createDirectories(dirs().configDir());
    Path ca = dirs().configDir().resolve("private-ca.pem");
    Files.writeString(ca, "-----BEGIN CERTIFICATE-----\n");
    Map<String, String> config = new HashMap<>(tls.config());
    config.put(Keys.CA_FILE, ca.toString());
    Held record =
        new Held(tls.id(), tls.key(), tls.port(), tls.pid(), config, tls.users(), Optional.empty());
    Handed h =
        imagePlanner("v3.4.1", Map.of())
            .plan(List.of(record), List.of(mount(10, STAGING, PORT)))
            .handed()
            .getFirst();
    EfsUtilsFiles files = files(EfsUtilsRelease.V3);
    assertEquals("/etc/amazon/efs/private-ca.pem", files.caSource(h));
    files.write(h);
    String written =
        Files.readString(dirs().stateDir().resolve(EfsUtilsFiles.CONFIG_PREFIX + h.stem()));
    assertTrue(written.contains("\nCAfile = /etc/amazon/efs/private-ca.pem\n"), written);
    assertEquals(
        NOW.toEpochMilli() / 1000.0,
        ((Number) state(h.stem()).get("mount_time")).doubleValue(),
        "mount_time: when the handback wrote it, not when the certificate was issued");
  }

  @Test
  void anIamMountWithANamedProfileRecordsItAs3xDoes() throws Exception {
    Handed h = handBackTeamProfileMount();
    String config =
        Files.readString(dirs().stateDir().resolve(EfsUtilsFiles.CONFIG_PREFIX + h.stem()));
    assertTrue(
        config.contains(
            "retry_nfs_mount_command_timeout_sec = 15\nprofile = team\ncloud_watch_logs = False"
                + "\nlog_group_name = /aws/efs/utils\ncloud_watch_logs_retention_days = 14\nfs_id = "
                + FS
                + "\nregion = "
                + EfsUtilsSamples.REGION
                + "\nefs_utils_version = 3.2.0"),
        config);
    assertEquals("credentials:team", state(h.stem()).get("awsCredentialsMethod"));
  }

  @Test
  void a3xTunnelConfigCarriesTheLinesMountEfsCopiesFromTheNodesEfsUtilsConf() throws Exception {
    // the efs-utils.conf the Go driver's pod rendered (with overrides) where it links
    // /etc/amazon/efs: mount.efs 3.x copies its [proxy] and [cloudwatch-log] settings into each
    // efs-proxy config (write_stunnel_config_file), so a handed-back one must carry the same
    Files.createDirectories(dirs().configDir());
    Files.writeString(
        dirs().configDir().resolve("efs-utils.conf"),
        """
        [DEFAULT]
        logging_level = INFO
        [mount]
        retry_nfs_mount_command_timeout_sec = 0
        [proxy]
        proxy_logging_level = DEBUG
        read_bypass_denylist_size = 5
        readahead_cache_enabled = off
        metrics_enabled = true
        [cloudwatch-log]
        Enabled: yes
        log_group_name = /aws/efs/team
        # retention_in_days = 14
        """);
    Handed h = handBackTeamProfileMount();
    String config =
        Files.readString(dirs().stateDir().resolve(EfsUtilsFiles.CONFIG_PREFIX + h.stem()));
    assertTrue(
        config.contains(
            String.join(
                "\n",
                "retry_nfs_mount_command_timeout_sec = 15", // under 1: efs-utils' default
                "proxy_logging_level = DEBUG",
                "proxy_logging_max_bytes = 1048576",
                "proxy_logging_file_count = 10",
                "read_bypass_denylist_size = 5",
                "readahead_cache_enabled = no",
                "profile = team",
                "cloud_watch_metrics = True",
                "cloud_watch_logs = True",
                "log_group_name = /aws/efs/team",
                "fs_id = " + FS,
                "region = " + EfsUtilsSamples.REGION,
                "efs_utils_version = 3.2.0")),
        config);
  }

  /** An access point + IAM mount of ours with the named profile "team", handed back to v3.4.1. */
  private Handed handBackTeamProfileMount() throws Exception {
    IamCredentialsSource team =
        new IamCredentialsSource(Optional.of("team"), Optional.empty(), Optional.empty());
    Held record = tlsRecord(Optional.of(EfsUtilsSamples.AP), true, team);
    Handed h =
        imagePlanner("v3.4.1", Map.of())
            .plan(List.of(record), List.of(mount(10, STAGING, PORT)))
            .handed()
            .getFirst();
    files(EfsUtilsRelease.V3).write(h);
    return h;
  }

  @Test
  void aDryRunWritesNothingNotEvenAnUnreadableRecordMovedAside() throws Exception {
    Held record = tlsRecord(Optional.empty(), false, IamCredentialsSource.DEFAULT_CHAIN);
    StateStore store = new StateStore(ours());
    store.write(HandbackPlannerTest.record(record));
    Path torn = store.dir().resolve("proxy-20499.json");
    Files.writeString(torn, "{\"id\": \"proxy-20499\", \"po");
    List<String> before = tree(dir);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Handback hb =
        new Handback(
            imagePlanner("v3.4.1", Map.of()),
            files(EfsUtilsRelease.V3),
            Handoff.reading(ours()),
            () -> List.of(mount(10, STAGING, PORT)),
            Handback.Timing.DEFAULT,
            new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertEquals(0, hb.dryRun());
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(
        out.contains(
            "tunnel   127.0.0.1:"
                + PORT
                + ": /sbin/efs-proxy (CA: /etc/amazon/efs/efs-utils.crt): the Go driver v3.4.1's"
                + " image is Amazon Linux 2023"),
        out);
    assertEquals(before, tree(dir), "the dry run changed nothing");
    assertTrue(Files.exists(torn), "the torn record is where it was");
    // a state dir without records: none made
    Path empty = dir.resolve("no-state");
    assertEquals(List.of(), Handoff.reading(empty).proxies());
    assertFalse(Files.exists(empty));
  }

  /** Every path under {@code root} with its size and mtime. */
  private static List<String> tree(Path root) throws Exception {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.sorted()
          .map(p -> {
            try {
              return p + " " + Files.size(p) + " " + Files.getLastModifiedTime(p);
            } catch (java.io.IOException e) {
              return p + " gone";
            }
          })
          .toList();
    }
  }

  private Map<?, ?> state(String stem) throws Exception {
    return (Map<?, ?>) Json.parse(Files.readString(dirs().stateDir().resolve(stem)).strip());
  }
}

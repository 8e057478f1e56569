package io.efscsi.node.handback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.iam.CertificateFiles;
import io.efscsi.node.takeover.EfsUtilsSamples;
import io.efscsi.node.takeover.EfsUtilsState;
import io.efscsi.node.takeover.EfsUtilsStateParser;
import io.efscsi.node.takeover.TakeoverPlan;
import io.efscsi.node.takeover.TakeoverPlanner;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyConfig.Keys;
import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.ProxySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The files a handback writes, for each efs-utils line: the same text mount.efs writes (compared
 * with {@link EfsUtilsSamples}, written from efs-utils' sources), read back by our own takeover
 * parser to the proxy our record describes, so that a roll forward takes the mount over again.
 */
class HandbackFilesTest extends HandbackFixture {

  static EfsUtilsSamples.Release sampleOf(EfsUtilsRelease r) {
    return switch (r) {
      case V1 -> EfsUtilsSamples.Release.V1_35_STUNNEL;
      case V2 -> EfsUtilsSamples.Release.V2_PROXY;
      case V3 -> EfsUtilsSamples.Release.V3_PROXY;
    };
  }

  static Map<?, ?> json(String s) {
    return (Map<?, ?>) Json.parse(s.strip());
  }

  @ParameterizedTest
  @EnumSource(EfsUtilsRelease.class)
  void eachLineGetsWhatMountEfsWritesAndTheTakeoverReadsItBackToOurProxy(EfsUtilsRelease r)
      throws Exception {
    Held record =
        tlsRecord(Optional.of(EfsUtilsSamples.AP), true, IamCredentialsSource.DEFAULT_CHAIN);
    HandbackPlan plan =
        planner(r, Map.of())
            .plan(List.of(record), List.of(mount(10, STAGING, PORT), mount(11, "/pod/t", PORT)));
    assertEquals(List.of(), plan.refused());
    Handed h = plan.handed().getFirst();
    assertEquals(List.of("/pod/t"), h.alsoOnPort(), "the pod's bind mount rides on the port");
    EfsUtilsFiles files = files(r);
    EfsUtilsFiles.Written w = files.write(h);
    assertEquals("ours; our key is efs-utils' shared key now", w.certificateSource());

    EfsUtilsSamples sample = new EfsUtilsSamples().release(sampleOf(r));
    sample.mountPoint = STAGING;
    sample.port = PORT;
    sample.accessPoint = Optional.of(EfsUtilsSamples.AP);
    sample.credentialsMethod = Optional.of("metadata:");
    assertEquals(sample.stem(), h.stem());
    Path stateDir = dirs().stateDir();
    String config = Files.readString(stateDir.resolve("stunnel-config." + h.stem()));
    assertEquals(sample.config(), config, "the tunnel config, line for line");
    Map<Object, Object> expected = new LinkedHashMap<>(json(sample.state()));
    Map<Object, Object> written =
        new LinkedHashMap<>(json(Files.readString(stateDir.resolve(h.stem()))));
    for (String volatileField :
        List.of("mount_time", "commonName", "certificateCreationTime", "unmount_count", "pid")) {
      expected.remove(volatileField);
      assertTrue(
          volatileField.equals("unmount_count") || volatileField.equals("pid")
              ? !written.containsKey(volatileField)
              : written.remove(volatileField) != null,
          volatileField);
    }
    assertEquals(List.copyOf(expected.keySet()), List.copyOf(written.keySet()), "field order");
    assertEquals(expected, written);
    if (r == EfsUtilsRelease.V1) {
      // the stand-in's binary here; what efs-utils 1.3x in the Go driver's image runs is stunnel5
      assertTrue(Files.readString(stateDir.resolve(h.stem())).contains("\"/usr/bin/stunnel\""));
    }

    // a roll forward: our own takeover reads it back to the same proxy
    EfsUtilsState back =
        EfsUtilsStateParser.parse(h.stem(), Files.readString(stateDir.resolve(h.stem())), config);
    TakeoverPlan again = new TakeoverPlanner(dirs()).plan(back, List.of(STAGING, "/pod/t"));
    ProxySpec now = ProxySpec.of(ProxyConfig.fromMap(record.config()));
    ProxySpec then = again.proxy();
    assertEquals(now.upstreamHost(), then.upstreamHost());
    assertEquals(now.upstreamPort(), then.upstreamPort());
    assertEquals(now.tls(), then.tls());
    assertEquals(now.serverName(), then.serverName());
    assertEquals(now.verifyHostname(), then.verifyHostname());
    assertEquals(now.caFile(), then.caFile(), "the Amazon roots both ways");
    assertEquals(r.bind(), then.bind(), "the binding of the tunnel that served it meanwhile");
    TakeoverPlan.Certificate c = again.certificate().orElseThrow();
    assertEquals(FS, c.fileSystemId());
    assertEquals(Optional.of(EfsUtilsSamples.AP), c.accessPointId());
    assertTrue(c.iam());
    assertEquals(IamCredentialsSource.DEFAULT_CHAIN, c.credentials());
    assertEquals(EfsUtilsSamples.REGION, c.region());
    Path cert = c.efsUtilsCertificate().orElseThrow();
    Path key = c.efsUtilsKey().orElseThrow();
    assertEquals(files.sharedKey(), key);
    assertTrue(CertificateFiles.certifies(cert, key), "the tunnel's certificate is for its key");
    assertEquals(PosixFilePermissions.fromString("r--------"), Files.getPosixFilePermissions(key));
    assertEquals(
        "unique_subject = no",
        Files.readString(stateDir.resolve(h.stem() + "+/database/index.txt.attr")),
        "the openssl CA database the watchdog's renewals use");
  }

  @Test
  void plainTcpVolumesGetAnEfsProxyWithoutTls() throws Exception {
    Map<String, String> config = new HashMap<>();
    config.put(Keys.LISTEN_PORT, Integer.toString(PORT));
    config.put(Keys.UPSTREAM_HOST, "10.0.1.23");
    config.put(Keys.UPSTREAM_PORT, "2049");
    config.put(Keys.TLS, "false");
    config.put(Keys.SERVER_NAME, DNS);
    config.put(Keys.VERIFY_HOSTNAME, "false");
    config.put(Keys.BIND, "awsfile-v3");
    Held record =
        new Held(
            "proxy-" + PORT,
            FS + "|-|10.0.1.23:2049|notls|" + DNS + "|noiam|-|verify|-|-|-",
            PORT,
            4242,
            config,
            Set.of(STAGING),
            Optional.empty());
    Handed h =
        planner(EfsUtilsRelease.V3, Map.of())
            .plan(List.of(record), List.of(mount(10, STAGING, PORT)))
            .handed()
            .getFirst();
    files(EfsUtilsRelease.V3).write(h);
    EfsUtilsSamples sample = new EfsUtilsSamples().release(EfsUtilsSamples.Release.V3_PROXY);
    sample.mountPoint = STAGING;
    sample.port = PORT;
    sample.tls = false;
    sample.connectHost = "10.0.1.23";
    Path stateDir = dirs().stateDir();
    String cfg = Files.readString(stateDir.resolve("stunnel-config." + h.stem()));
    assertEquals(sample.config(), cfg);
    assertFalse(Files.exists(stateDir.resolve(h.stem() + "+")), "no mount dir without TLS");
    EfsUtilsState back =
        EfsUtilsStateParser.parse(h.stem(), Files.readString(stateDir.resolve(h.stem())), cfg);
    ProxySpec then = new TakeoverPlanner(dirs()).plan(back, List.of(STAGING)).proxy();
    assertEquals(
        new ProxySpec(
            "10.0.1.23",
            2049,
            false,
            "10.0.1.23",
            false,
            Optional.empty(),
            Optional.empty(),
            EfsUtilsRelease.V3.bind()),
        then);
  }
}

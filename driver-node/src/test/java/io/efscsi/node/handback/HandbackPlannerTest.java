package io.efscsi.node.handback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.handback.HandbackPlan.Handed;
import io.efscsi.node.iam.CertificateFiles;
import io.efscsi.node.takeover.EfsUtilsSamples;
import io.efscsi.node.takeover.EfsUtilsStateParser;
import io.efscsi.node.takeover.TakeoverPlanner;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.supervisor.Handoff;
import io.efscsi.supervisor.Handoff.Held;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.state.ProxyRecord;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which mounts are handed back and which are refused, with the reasons an operator reads. */
class HandbackPlannerTest extends HandbackFixture {

  static final List<MountInfo> TABLE = List.of(mount(10, STAGING, PORT));

  Held record() throws Exception {
    return tlsRecord(Optional.empty(), false, IamCredentialsSource.DEFAULT_CHAIN);
  }

  String refusal(EfsUtilsRelease r, Held record, List<MountInfo> table) throws Exception {
    HandbackPlan plan = planner(r, Map.of()).plan(List.of(record), table);
    assertEquals(List.of(), plan.handed(), "refused, not handed");
    assertEquals(1, plan.refused().size());
    return plan.refused().getFirst().reason();
  }

  static Held with(Held r, String key, long pid, Set<String> users, Optional<String> moving) {
    return new Held(r.id(), key, r.port(), pid, r.config(), users, moving);
  }

  static Held withKey(Held r, String key) {
    return with(r, key, r.pid(), r.users(), r.moving());
  }

  /** As the supervisor writes it. */
  static ProxyRecord record(Held h) {
    return new ProxyRecord(h.id(), h.key(), h.port(), h.pid(), 1, "", h.config(), h.users(), 0, 1L);
  }

  @Test
  void whatEfsUtilsCannotDoIsRefusedWithItsReason() throws Exception {
    Held r = record();
    assertTrue(
        refusal(EfsUtilsRelease.V3, withKey(r, "s3files:" + r.key()), TABLE)
            .startsWith("an S3 Files volume: efs-utils mounts S3 Files with read bypass"));
    Map<String, String> plain = new HashMap<>(r.config());
    plain.put("tls", "false");
    plain.remove("tls.cert-file");
    plain.remove("tls.key-file");
    Held notls = new Held(r.id(), r.key(), PORT, 4242, plain, r.users(), Optional.empty());
    assertEquals(
        "efs-utils 1.3x mounts without TLS straight to the mount target: there is no tunnel to"
            + " hand port 20417 to",
        refusal(EfsUtilsRelease.V1, notls, TABLE));
    assertEquals(
        "no proxy process runs for it (pid 0 in its record)",
        refusal(EfsUtilsRelease.V3, with(r, r.key(), 0, r.users(), Optional.empty()), TABLE));
    assertTrue(
        refusal(
                EfsUtilsRelease.V3,
                with(r, r.key(), r.pid(), r.users(), Optional.of("launching")),
                TABLE)
            .startsWith("a rolling proxy upgrade is moving it (launching)"));
    assertTrue(
        refusal(
                EfsUtilsRelease.V3,
                with(r, r.key(), r.pid(), Set.of("/elsewhere"), Optional.empty()),
                TABLE)
            .startsWith(
                "none of its volumes' staging paths [/elsewhere] is mounted on port 20417"));
    Files.delete(Path.of(r.config().get("tls.cert-file")).resolveSibling("request.properties"));
    assertTrue(
        refusal(EfsUtilsRelease.V3, r, TABLE)
            .startsWith("what its client certificate certifies is not readable"));
  }

  @Test
  void aStaleStateOnThePortAndATakenOverMountWhoseStateIsGoneAreRefused() throws Exception {
    Held r = record();
    EfsUtilsSamples stale = new EfsUtilsSamples();
    stale.mountPoint = "/var/lib/kubelet/pods/x/volumes/kubernetes.io~csi/old/mount";
    stale.port = PORT;
    Files.createDirectories(dirs().stateDir());
    Files.writeString(dirs().stateDir().resolve(stale.stem()), stale.state());
    assertEquals(
        "efs-utils state "
            + stale.stem()
            + " already names port 20417; the watchdog would start two tunnels on it (remove"
            + " the stale file first)",
        refusal(EfsUtilsRelease.V3, r, TABLE));
    Files.delete(dirs().stateDir().resolve(stale.stem()));
    EfsUtilsSamples gone = new EfsUtilsSamples();
    gone.port = PORT;
    Held takenOver =
        with(
            r,
            TakeoverPlanner.KEY_PREFIX + gone.stem(),
            r.pid(),
            Set.of(gone.mountPoint),
            Optional.empty());
    assertTrue(
        refusal(EfsUtilsRelease.V3, takenOver, List.of(mount(12, gone.mountPoint, PORT)))
            .startsWith("efs-utils' state " + gone.stem() + " of this taken-over mount is gone"));
  }

  @Test
  void aTakenOverMountGoesBackUnderItsOwnNameWithItsIdentityAndTheUndoRestoresEfsUtilsFiles()
      throws Exception {
    // efs-utils 3.x made it (IAM, access point, Pod Identity); we took it over
    EfsUtilsSamples made = new EfsUtilsSamples();
    made.port = PORT;
    made.accessPoint = Optional.of(EfsUtilsSamples.AP);
    made.credentialsMethod =
        Optional.of("podidentity:http://169.254.170.23/v1/credentials,/var/run/secrets/token");
    Path state = dirs().stateDir();
    String originalState = made.state();
    Held takenOver = takenOver(made, true, "awsfile-v3");
    Map<String, String> env =
        Map.of(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.23/v1/credentials",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/var/run/secrets/token");
    Handed h =
        planner(EfsUtilsRelease.V3, env)
            .plan(List.of(takenOver), List.of(mount(12, made.mountPoint, PORT)))
            .handed()
            .getFirst();
    assertEquals(made.stem(), h.stem(), "its own name again");
    EfsUtilsFiles files = files(EfsUtilsRelease.V3);
    assertEquals("ours (on efs-utils' shared key)", files.certificateSource(h.certificate().get()));
    EfsUtilsFiles.Written w = files.write(h);
    String written = Files.readString(state.resolve(made.stem()));
    assertTrue(
        written.contains(
            "\"awsCredentialsMethod\": \"podidentity:http://169.254.170.23/v1/credentials,"
                + "/var/run/secrets/token\", \"accessPoint\": \""
                + EfsUtilsSamples.AP
                + "\""),
        written);
    assertEquals(
        EfsUtilsStateParser.parse(made.stem(), originalState, made.config()).accessPointId(),
        EfsUtilsStateParser.parse(
                made.stem(),
                written,
                Files.readString(state.resolve("stunnel-config." + made.stem())))
            .accessPointId());
    assertTrue(
        CertificateFiles.certifies(
            state.resolve(made.stem() + "+/certificate.pem"),
            dirs().configDir().resolve("privateKey.pem")));
    w.undo();
    assertEquals(originalState, Files.readString(state.resolve(made.stem())), "put back");
    assertEquals(made.config(), Files.readString(state.resolve("stunnel-config." + made.stem())));
    assertTrue(Files.exists(state.resolve(made.stem() + "+")), "efs-utils' own dir stays");
  }

  @Test
  void anotherSharedKeyGetsANewCertificateWithTheSameIdentity() throws Exception {
    Held r = tlsRecord(Optional.of(EfsUtilsSamples.AP), true, IamCredentialsSource.DEFAULT_CHAIN);
    Files.createDirectories(dirs().configDir());
    // a key of another process, as efs-utils' genpkey leaves it (PKCS#8 PEM)
    java.security.KeyPairGenerator g = java.security.KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    Files.writeString(
        dirs().configDir().resolve("privateKey.pem"),
        "-----BEGIN PRIVATE KEY-----\n"
            + java.util.Base64.getMimeEncoder(64, new byte[] {'\n'})
                .encodeToString(g.generateKeyPair().getPrivate().getEncoded())
            + "\n-----END PRIVATE KEY-----\n");
    Handed h = planner(EfsUtilsRelease.V2, Map.of()).plan(List.of(r), TABLE).handed().getFirst();
    EfsUtilsFiles files = files(EfsUtilsRelease.V2);
    assertEquals("new, for efs-utils' shared key", files.certificateSource(h.certificate().get()));
    EfsUtilsFiles.Written w = files.write(h);
    assertEquals("new, for efs-utils' shared key", w.certificateSource());
    Path cert = dirs().stateDir().resolve(h.stem() + "+/certificate.pem");
    assertTrue(CertificateFiles.certifies(cert, files.sharedKey()));
    assertFalse(CertificateFiles.certifies(cert, Path.of(r.config().get("tls.key-file"))));
    assertTrue(
        new String(
                java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(Files.newInputStream(cert))
                    .getEncoded(),
                StandardCharsets.ISO_8859_1)
            .contains(EfsUtilsSamples.AP),
        "the access point is in the new certificate");
    assertFalse(Files.exists(ours().resolve("handback-" + h.stem() + "+")), "scratch removed");
    w.undo();
    assertTrue(Files.exists(files.sharedKey()), "efs-utils' key is not ours to remove");
    assertFalse(Files.exists(dirs().stateDir().resolve(h.stem())));
  }

  @Test
  void theDefaultChainIsRecordedAsEfsUtilsOwnChainWouldFindIt() {
    IamCredentialsSource chain = IamCredentialsSource.DEFAULT_CHAIN;
    assertEquals("metadata:", HandbackPlanner.credentialsMethod(chain, Map.of()));
    assertEquals(
        "webidentity:arn:aws:iam::1:role/r,/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
        HandbackPlanner.credentialsMethod(
            chain,
            Map.of(
                "AWS_ROLE_ARN", "arn:aws:iam::1:role/r",
                "AWS_WEB_IDENTITY_TOKEN_FILE",
                    "/var/run/secrets/eks.amazonaws.com/serviceaccount/token")));
    assertEquals(
        "credentials:team",
        HandbackPlanner.credentialsMethod(
            new IamCredentialsSource(Optional.of("team"), Optional.empty(), Optional.empty()),
            Map.of("AWS_ROLE_ARN", "ignored")));
  }

  @Test
  void theGoDriverReleaseNamesTheEfsUtilsLine() {
    assertEquals(EfsUtilsRelease.V3, EfsUtilsRelease.ofGoDriver("v3.4.1"));
    assertEquals(EfsUtilsRelease.V2, EfsUtilsRelease.ofGoDriver("2.1.15"));
    assertEquals(EfsUtilsRelease.V1, EfsUtilsRelease.ofGoDriver("v1.7.7"));
    assertEquals(
        "--go-driver v4.0.0 is not a release this handback knows (1.x, 2.x or 3.x: efs-utils 1.3x,"
            + " 2.x, 3.x)",
        assertThrows(IllegalArgumentException.class, () -> EfsUtilsRelease.ofGoDriver("v4.0.0"))
            .getMessage());
    assertEquals(
        "--go-driver must be the Go driver's release (as v3.4.1), got 'latest'",
        assertThrows(IllegalArgumentException.class, () -> EfsUtilsRelease.ofGoDriver("latest"))
            .getMessage());
  }

  @Test
  void theDryRunPrintsThePlanAndWritesNothing() throws Exception {
    Held handed = record();
    Held idle =
        new Held(
            "proxy-20418",
            handed.key(),
            20418,
            4243,
            handed.config(),
            Set.of("/x"),
            Optional.empty());
    Held s3 =
        new Held(
            "proxy-20419",
            "s3files:" + handed.key(),
            20419,
            4244,
            handed.config(),
            Set.of("/s3"),
            Optional.empty());
    io.efscsi.supervisor.state.StateStore store = new io.efscsi.supervisor.state.StateStore(ours());
    store.write(record(handed));
    store.write(record(idle));
    store.write(record(s3));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Handback hb =
        new Handback(
            planner(EfsUtilsRelease.V3, Map.of()),
            files(EfsUtilsRelease.V3),
            Handoff.of(ours()),
            () -> List.of(mount(10, STAGING, PORT), mount(11, "/s3", 20419)),
            Handback.Timing.DEFAULT,
            new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertEquals(1, hb.dryRun(), "one would be refused");
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(
        out.startsWith(
            "handback to the Go driver v3.4.1 (efs-utils 3.x, Amazon Linux 2023) of 3 proxies: 1"
                + " to hand back, 1 idle, 1 refused\n"),
        out);
    assertTrue(out.contains("PORT   MOUNT POINT"), out);
    assertTrue(
        out.contains(
            "20417  "
                + STAGING
                + "  efs-proxy tls  "
                + DNS
                + ":2049  ours; our key becomes efs-utils' shared key\n"),
        out);
    assertTrue(out.contains("idle     127.0.0.1:20418: no mount uses it"), out);
    assertTrue(out.contains("refused  127.0.0.1:20419 (/s3): an S3 Files volume"), out);
    assertTrue(out.contains("dry run: nothing written."), out);
    assertFalse(Files.exists(dirs().stateDir()), "nothing written");
    assertEquals(1, hb.run(false), "refusals stop a handback without --go-on");
    assertFalse(Files.exists(dirs().stateDir()), "still nothing written");
  }

  @Test
  void theWaitIsSaidAsTheOperatorGaveIt() {
    assertEquals("30 min", Handback.spoken(java.time.Duration.ofMinutes(30)));
    assertEquals("20 s", Handback.spoken(java.time.Duration.ofSeconds(20)));
    assertEquals("90 s", Handback.spoken(java.time.Duration.ofSeconds(90)));
    assertEquals("0 s", Handback.spoken(java.time.Duration.ZERO));
  }
}

package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MountOptionsTest {

  private static MountOptions parse(String... flags) {
    return MountOptions.parse(List.of(flags));
  }

  @Test
  void efsOptionsAreInterpretedAndNeverPassedOn() {
    MountOptions o =
        parse(
            "TLS",
            "iam",
            "accesspoint=FSAP-ABCD1234",
            "mounttargetip=10.0.0.5",
            "az=us-east-1b",
            "region=eu-west-1",
            "crossaccount",
            "cafile=/etc/Certs/CA.pem",
            "verify=0",
            "awsprofile=Prod",
            "rolearn=arn:aws:iam::123456789012:role/EfsMount,jwtpath=/var/run/Token");
    assertTrue(o.tls());
    assertTrue(o.iam());
    assertTrue(o.crossAccount());
    assertEquals(Optional.of("fsap-abcd1234"), o.accessPointId());
    assertEquals(Optional.of("10.0.0.5"), o.mountTargetIp());
    assertEquals(Optional.of("us-east-1b"), o.az());
    assertEquals(Optional.of("eu-west-1"), o.region());
    assertEquals(Optional.of(Path.of("/etc/Certs/CA.pem")), o.caFile());
    assertEquals(OptionalInt.of(0), o.verify());
    assertEquals(Optional.of("Prod"), o.awsProfile());
    assertEquals(Optional.of("arn:aws:iam::123456789012:role/EfsMount"), o.roleArn());
    assertEquals(Optional.of("/var/run/Token"), o.jwtPath());
    assertEquals(List.of(), o.nfs());
    assertEquals(List.of(), o.warnings());
  }

  @Test
  void nfsOptionsAreLowerCasedSplitAndDeduplicatedLastWins() {
    MountOptions o =
        parse("RSIZE=65536,WSIZE=65536", " Hard ", "rsize=32768", "noac", "ac", "", "vers=4.0");
    assertEquals(List.of("rsize=32768", "wsize=65536", "hard", "ac", "vers=4.0"), o.nfs());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "tlsport=20050|mount option tlsport=20050 ignored: the supervisor picks the proxy's port",
        "awscredsuri=/v2/credentials/x|awscredsuri mount option is not supported by efs-csi-driver.",
        "ocsp|mount option ocsp ignored: no OCSP checking (as efs-proxy)",
        "noocsp|mount option noocsp ignored: no OCSP checking (as efs-proxy)",
        "nos3readcache|mount option nos3readcache ignored: it applies to S3 Files only",
        "nodirects3read|mount option nodirects3read ignored: it applies to S3 Files only",
        "_netdev|mount option _netdev ignored: the kubelet orders network mounts",
      })
  void ignoredOptionsWarn(String option, String warning) {
    MountOptions o = parse(option);
    assertEquals(List.of(warning), o.warnings());
    assertEquals(List.of(), o.nfs());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "stunnel|mount option 'stunnel' is not supported by this driver: there is no stunnel mode; the supervised proxy carries every mount",
        "netns=/proc/1/ns/net|mount option 'netns=/proc/1/ns/net' is not supported by this driver: the proxy and the mount live in the node's network namespace",
        "capath=/etc/ssl|mount option 'capath=/etc/ssl' is not supported by this driver: give a CA bundle file with cafile= instead",
        "azid=use1-az1|mount option 'azid=use1-az1' is not supported by this driver: it applies to S3 Files only",
        "accesspoint=fsap-xyz|mount option 'accesspoint=fsap-xyz' is invalid: expected an access point ID of the form 'fsap-[0-9a-f]{8,40}'",
        "accesspoint|mount option 'accesspoint' is invalid: expected accesspoint=value",
        "tls=1|mount option 'tls=1' is invalid: expected tls without a value",
        "mounttargetip=my.host|mount option 'mounttargetip=my.host' is invalid: expected an IPv4 or IPv6 address",
        "az=us east|mount option 'az=us east' is invalid: expected an availability zone name or id such as us-east-1a",
        "region=us_east_1|mount option 'region=us_east_1' is invalid: expected a region such as us-east-1",
        "cafile=ca.pem|mount option 'cafile=ca.pem' is invalid: expected an absolute path",
        "verify=9|mount option 'verify=9' is invalid: expected a verification level 0-4 (0 turns verification off)",
        "jwtpath=token|mount option 'jwtpath=token' is invalid: expected an absolute path",
        "awsprofile=|mount option 'awsprofile=' is invalid: expected a value",
        "port=2049|mount option 'port=2049' is invalid: the node sets port= to its proxy's local port",
        "nfsvers=3|mount option 'nfsvers=3' is invalid: EFS serves NFS 4.0 and 4.1 (expected 4, 4.0 or 4.1)",
        "vers=4.2|mount option 'vers=4.2' is invalid: EFS serves NFS 4.0 and 4.1 (expected 4, 4.0 or 4.1)",
        "proto=udp|mount option 'proto=udp' is invalid: the local proxy only speaks TCP (expected proto=tcp)",
        "timeo=0|mount option 'timeo=0' is invalid: expected a positive integer",
        "rsize=big|mount option 'rsize=big' is invalid: expected a positive integer",
        "retrans=-1|mount option 'retrans=-1' is invalid: expected a non-negative integer",
        "=x|mount option '=x' is invalid: expected name or name=value",
      })
  void badOrRefusedOptionsNameTheOption(String option, String message) {
    DriverException e = assertThrows(DriverException.class, () -> parse(option));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  /** A path option holding a NUL or another control character (VolumeContextFuzzTest found it). */
  @Test
  void aPathWithAControlCharacterIsInvalidNotACrash() {
    for (String o : List.of("cafile=/etc/ca\0.pem", "jwtpath=/var/run/\ntoken", "cafile=/\u007f")) {
      DriverException e = assertThrows(DriverException.class, () -> parse(o));
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
      assertTrue(
          e.getMessage().endsWith("is invalid: expected a path without control characters"),
          e.getMessage());
    }
  }

  /** What mount(8) would do instead of an NFS mount of the volume: each name, in any case/form. */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "bind|it makes mount(8) bind another path instead of mounting the volume; the node binds the staged volume into each pod itself",
        "rbind|it makes mount(8) bind another path instead of mounting the volume; the node binds the staged volume into each pod itself",
        "B|it makes mount(8) bind another path instead of mounting the volume; the node binds the staged volume into each pod itself",
        "R|it makes mount(8) bind another path instead of mounting the volume; the node binds the staged volume into each pod itself",
        "remount|it makes mount(8) change or move an existing mount instead of mounting the volume",
        "move|it makes mount(8) change or move an existing mount instead of mounting the volume",
        "M|it makes mount(8) change or move an existing mount instead of mounting the volume",
        "shared|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "rshared|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "slave|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "rslave|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "private|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "rprivate|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "unbindable|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "runbindable|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "make-rshared|mount propagation is the kubelet's (a container's mountPropagation), not the volume's",
        "X-mount.mkdir=0700|mount(8) and its helpers act on X-/x- options themselves (X-mount.mkdir, X-mount.owner, X-mount.subdir, X-mount.idmap, …); the node prepares its mount points itself",
        "x-mount.subdir=etc|mount(8) and its helpers act on X-/x- options themselves (X-mount.mkdir, X-mount.owner, X-mount.subdir, X-mount.idmap, …); the node prepares its mount points itself",
        "x-systemd.requires=a|mount(8) and its helpers act on X-/x- options themselves (X-mount.mkdir, X-mount.owner, X-mount.subdir, X-mount.idmap, …); the node prepares its mount points itself",
        "x-anything|mount(8) and its helpers act on X-/x- options themselves (X-mount.mkdir, X-mount.owner, X-mount.subdir, X-mount.idmap, …); the node prepares its mount points itself",
        "loop=/dev/loop0|it sets up a loop device; an EFS volume is a network mount",
        "offset=4096|it sets up a loop device; an EFS volume is a network mount",
        "sizelimit=1|it sets up a loop device; an EFS volume is a network mount",
        "encryption=aes|it sets up a loop device; an EFS volume is a network mount",
        "helper=efs|it makes umount(8) run a helper program",
        "uhelper=x|it makes umount(8) run a helper program",
        "user|it lets users other than root mount or unmount the volume; the kubelet alone decides when a volume is mounted",
        "users|it lets users other than root mount or unmount the volume; the kubelet alone decides when a volume is mounted",
        "owner|it lets users other than root mount or unmount the volume; the kubelet alone decides when a volume is mounted",
        "group|it lets users other than root mount or unmount the volume; the kubelet alone decides when a volume is mounted",
      })
  void optionsThatChangeWhatTheMountIsAreRefused(String option, String why) {
    for (String form :
        List.of(
            option,
            option.toUpperCase(java.util.Locale.ROOT),
            " " + option + " ",
            option.contains("=") ? option : option + "=1",
            "noatime," + option + ",hard")) {
      for (boolean s3files : List.of(false, true)) {
        DriverException e =
            assertThrows(
                DriverException.class, () -> MountOptions.parse(List.of(form), s3files), form);
        assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
        String lower = form.strip().toLowerCase(java.util.Locale.ROOT);
        String named =
            form.startsWith("noatime,") ? option.toLowerCase(java.util.Locale.ROOT) : lower;
        assertEquals(
            "mount option '" + named + "' is not supported by this driver: " + why,
            e.getMessage(),
            form);
      }
    }
  }

  /** Options real PVs and StorageClasses carry, generic and NFS: passed to mount.nfs4 as given. */
  @Test
  void harmlessGenericOptionsStillPass() {
    List<String> kept =
        List.of(
            "noatime",
            "nodiratime",
            "relatime",
            "lazytime",
            "nosuid",
            "nodev",
            "noexec",
            "nosymfollow",
            "sync",
            "dirsync",
            "defaults",
            "nofail",
            "auto",
            "nouser",
            "context=system_u:object_r:container_file_t:s0",
            "nconnect=4",
            "actimeo=30",
            "lookupcache=pos",
            "fsc",
            "sec=sys",
            "local_lock=none");
    assertEquals(kept, MountOptions.parse(kept).nfs());
  }

  @Test
  void retransZeroAndProtoTcpAreFine() {
    assertEquals(List.of("retrans=0", "proto=tcp"), parse("retrans=0", "proto=tcp").nfs());
  }

  @Test
  void theEfsOptionSetIsWhatDefaultsRefuse() {
    for (String o :
        List.of(
            "tls",
            "notls",
            "iam",
            "accesspoint=x",
            "mounttargetip=x",
            "az=x",
            "crossaccount",
            "tlsport=1",
            "cafile=x",
            "verify=1",
            "awsprofile=x",
            "awscredsuri=x",
            "rolearn=x",
            "jwtpath=x",
            "netns=x",
            "ocsp",
            "noocsp",
            "stunnel",
            "region=x")) {
      assertTrue(MountOptions.isEfsOption(o), o);
    }
    for (String o : List.of("soft", "hard", "nfsvers=4.1", "noresvport", "nconnect=4", "ro")) {
      assertFalse(MountOptions.isEfsOption(o), o);
    }
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "soft|hard|hard",
        "hard|soft|soft",
        "soft|softerr|softerr",
        "nfsvers=4.1|vers=4.0|vers=4.0",
        "noresvport|resvport|resvport",
        "ro|rw|rw",
        "sync|async|async",
        "timeo=50|timeo=600|timeo=600",
      })
  void sameOptionKeys(String first, String second, String kept) {
    assertEquals(List.of(kept), NfsOptions.merge(List.of(first), List.of(second)));
  }
}

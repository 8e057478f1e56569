package io.efscsi.supervisor.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class MountInfoParserTest {

  static final String NFS =
      "812 29 0:55 / /var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/abc/globalmount"
          + " rw,relatime shared:412 master:7 - nfs4 127.0.0.1:/ rw,vers=4.1,rsize=1048576,"
          + "wsize=1048576,namlen=255,soft,noresvport,proto=tcp,port=20049,timeo=150,retrans=2,"
          + "sec=sys,clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.1";

  @Test
  void parsesAnNfsLineWithOptionalFields() {
    MountInfo m = MountInfoParser.parseLine(NFS, 1);
    assertEquals(812, m.mountId());
    assertEquals(29, m.parentId());
    assertEquals("0:55", m.device());
    assertEquals("/", m.root());
    assertEquals(List.of("shared:412", "master:7"), m.optionalFields());
    assertEquals("nfs4", m.fsType());
    assertEquals("127.0.0.1:/", m.source());
    assertTrue(m.isLoopbackNfs());
    assertEquals(OptionalInt.of(20049), m.loopbackPort());
    assertEquals(
        "soft",
        m.superOptionMap().keySet().stream().filter("soft"::equals).findFirst().orElseThrow());
  }

  @Test
  void parsesALineWithoutOptionalFieldsAndEmptySuperOptions() {
    MountInfo m = MountInfoParser.parseLine("25 1 0:22 / /proc rw - proc proc", 1);
    assertEquals(List.of(), m.optionalFields());
    assertEquals("", m.superOptions());
    assertFalse(m.isLoopbackNfs());
    assertEquals(OptionalInt.empty(), m.loopbackPort());
  }

  @Test
  void decodesOctalEscapes() {
    MountInfo m =
        MountInfoParser.parseLine(
            "30 1 0:5 /a\\134b /mnt/with\\040space\\011tab rw - tmpfs my\\040src rw", 1);
    assertEquals("/a\\b", m.root());
    assertEquals("/mnt/with space\ttab", m.mountPoint());
    assertEquals("my src", m.source());
    assertEquals("/mnt/with\\040space\\011tab", MountInfoParser.escape(m.mountPoint()));
  }

  @Test
  void aBackslashThatIsNotAnEscapeStays() {
    assertEquals("a\\9b", MountInfoParser.unescape("a\\9b"));
    assertEquals("end\\", MountInfoParser.unescape("end\\"));
  }

  @Test
  void otherServersAndNonNfsAreNotLoopback() {
    String remote = NFS.replace("addr=127.0.0.1", "addr=10.0.0.5");
    assertFalse(MountInfoParser.parseLine(remote, 1).isLoopbackNfs());
    String noPort = NFS.replace("port=20049,", "");
    assertEquals(OptionalInt.empty(), MountInfoParser.parseLine(noPort, 1).loopbackPort());
  }

  @Test
  void parsesAWholeTableAndSkipsBlankLines() {
    List<MountInfo> all =
        MountInfoParser.parse("25 1 0:22 / /proc rw - proc proc rw\n\n" + NFS + "\n");
    assertEquals(2, all.size());
    assertEquals(1, MountPresence.byPort(all).size());
  }

  @Test
  void malformedLinesAreRefusedWithTheirNumber() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                MountInfoParser.parse("25 1 0:22 / /proc rw - proc proc rw\n25 1 0:22 / /x rw\n"));
    assertTrue(e.getMessage().contains("line 2"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> MountInfoParser.parse("x 1 0:22 / /proc rw - proc proc rw"));
  }

  /** What MountInfoParserFuzzTest found the parser reading otherwise than proc(5) says. */
  @Test
  void readAsTheKernelWritesIt() {
    MountInfo dash = MountInfoParser.parseLine("30 1 0:5 / - rw shared:1 - tmpfs - rw", 1);
    assertEquals("-", dash.mountPoint(), "the separator is the first - after six fields");
    assertEquals(List.of("shared:1"), dash.optionalFields());
    assertEquals("tmpfs", dash.fsType());
    assertEquals(
        "rw\r",
        MountInfoParser.parseLine("30 1 0:5 / /m rw - tmpfs x rw\r", 1).superOptions(),
        "a last field keeps what strip() would have removed");
    for (String id : List.of("+30 1", "30 -1", "\u0663 1")) {
      assertThrows(
          IllegalArgumentException.class,
          () -> MountInfoParser.parseLine(id + " 0:5 / /m rw - tmpfs x rw", 1),
          id);
    }
    for (String port : List.of("+20049", "-1", "99999", "\u0662\u0660\u0660")) {
      assertEquals(
          OptionalInt.empty(),
          MountInfoParser.parseLine(NFS.replace("port=20049", "port=" + port), 1).loopbackPort(),
          port);
    }
  }
}

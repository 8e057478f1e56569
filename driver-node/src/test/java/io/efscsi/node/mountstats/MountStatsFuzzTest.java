package io.efscsi.node.mountstats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.efscsi.supervisor.host.MountInfoParser;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mountstats reader, which reads a file any mount on the node writes into (its mount point):
 *
 * <ul>
 *   <li>any block written as the kernel writes it (escaped mount point, options, bytes, a TCP
 *       transport, operations with or without the errors column, numbers up to 2^64-1) reads back
 *       exactly, whatever non-NFS blocks surround it;
 *   <li>any text is read without an exception, in its bounds, keeping only NFS mounts, each refusal
 *       with its reason.
 * </ul>
 */
class MountStatsFuzzTest {

  private static final String[] OPS = {"READ", "WRITE", "GETATTR", "OPEN", "SEQUENCE", "NULL"};

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 25_000)
  @DictionaryEntries({
    "device ",
    " mounted on ",
    " with fstype nfs4",
    "opts:",
    "bytes:",
    "xprt:",
    "tcp ",
    "per-op statistics",
    "port="
  })
  void aWrittenBlockReadsBackAndAnyTextIsReadInBounds(FuzzedDataProvider data) {
    String mountPoint = mountPoint(data);
    int port = data.consumeInt(1, 65535);
    long[] bytes = new long[8];
    for (int i = 0; i < 8; i++) {
      bytes[i] = data.consumeLong();
    }
    long connects = data.consumeLong();
    boolean errors = data.consumeBoolean();
    Map<String, long[]> ops = new LinkedHashMap<>();
    for (int n = data.consumeInt(0, OPS.length); n > 0; n--) {
      long[] v = new long[errors ? 9 : 8];
      for (int i = 0; i < v.length; i++) {
        v[i] = data.consumeLong();
      }
      ops.put(data.pickValue(OPS), v);
    }
    StringBuilder text = new StringBuilder();
    if (data.consumeBoolean()) {
      text.append("device tmpfs mounted on /run with fstype tmpfs\n");
    }
    text.append("device 127.0.0.1:/ mounted on ").append(MountInfoParser.escape(mountPoint));
    text.append(" with fstype nfs4 statvers=1.1\n");
    text.append("\topts:\trw,vers=4.1,port=").append(port).append(",addr=127.0.0.1\n");
    text.append("\tage:\t").append(data.consumeInt(0, 1 << 20)).append('\n');
    text.append("\tbytes:\t").append(unsigned(bytes)).append('\n');
    text.append("\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n");
    text.append("\txprt:\ttcp 0 1 ").append(Long.toUnsignedString(connects));
    text.append(" 0 2 90 90 0 120 0 2 0 0\n\tper-op statistics\n");
    ops.forEach(
        (name, v) -> text.append("\t").append(name).append(": ").append(unsigned(v)).append('\n'));
    if (data.consumeBoolean()) {
      text.append("\ndevice proc mounted on /proc with fstype proc\n");
    }

    MountStats.Result r = MountStats.read(text.toString(), m -> true);
    assertEquals(List.of(), r.refused(), text::toString);
    assertEquals(1, r.mounts().size(), text::toString);
    MountStats.Mount m = r.mounts().get(0);
    assertEquals(mountPoint, m.mountPoint());
    assertEquals(port, m.port().orElseThrow());
    assertEquals(MountStats.u(bytes[4]), m.bytes().serverRead());
    assertEquals(MountStats.u(bytes[5]), m.bytes().serverWrite());
    assertEquals(MountStats.u(connects), m.connects());
    assertEquals(List.copyOf(ops.keySet()), List.copyOf(m.ops().keySet()));
    ops.forEach((name, v) -> {
      MountStats.Op op = m.ops().get(name);
      assertEquals(MountStats.u(v[0]), op.ops());
      assertEquals(MountStats.u(v[6]), op.rttMillis());
      assertEquals(MountStats.u(v[7]), op.executeMillis());
      assertEquals(errors ? MountStats.u(v[8]) : -1, op.errors());
      assertTrue(op.retransmissions() >= 0);
    });

    String any = data.consumeRemainingAsString();
    MountStats.Result a = MountStats.read(any, x -> true);
    assertTrue(a.mounts().size() <= MountStats.MAX_MOUNTS);
    assertTrue(a.refused().size() <= 16);
    for (MountStats.Mount x : a.mounts()) {
      assertTrue(x.fsType().equals("nfs") || x.fsType().equals("nfs4"), x::fsType);
      assertTrue(x.ops().size() <= MountStats.MAX_OPS);
      x.ops().values().forEach(op -> assertTrue(op.ops() >= 0 && op.retransmissions() >= 0));
    }
    a.refused()
        .forEach(reason -> assertTrue(reason.matches("(?s)(the mount on .+|a block): .+"), reason));
  }

  /** A path of any characters but NUL, as the kernel would show it once unescaped. */
  private static String mountPoint(FuzzedDataProvider data) {
    String s = data.consumeString(40).replace("\0", "");
    return "/" + s;
  }

  private static String unsigned(long[] v) {
    List<String> out = new ArrayList<>();
    for (long x : v) {
      out.add(Long.toUnsignedString(x));
    }
    return String.join(" ", out);
  }
}

package io.efscsi.node.mountstats;

/** Mountstats text for tests: blocks written as the kernel writes them. */
public final class MountStatsSamples {

  private MountStatsSamples() {}

  /** An NFSv4.1 mount's block through a proxy on {@code port}, with the given per-op lines. */
  public static String block(String mountPoint, int port, String opLines) {
    return "device 127.0.0.1:/ mounted on "
        + mountPoint
        + " with fstype nfs4 statvers=1.1\n"
        + "\topts:\trw,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,soft,proto=tcp,"
        + "port="
        + port
        + ",timeo=150,retrans=2,sec=sys,clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.1\n"
        + "\tage:\t42\n"
        + "\tbytes:\t100 200 300 400 5000 6000 7 8\n"
        + "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
        + "\txprt:\ttcp 0 0 3 0 2 90 90 0 120 0 2 0 0\n"
        + "\tper-op statistics\n"
        + opLines
        + "\n";
  }

  /** A real file's text (test resources: mountstats as a kernel wrote it in the kernel VM). */
  public static String sample(String name) {
    try (var in = MountStatsSamples.class.getResourceAsStream("/mountstats/" + name)) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}

package io.efscsi.node.volume;

import io.efscsi.common.config.Flag;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The node's NFS options for every volume, before the PV's own {@code mountOptions} are merged in
 * (see {@link MountOptions}).
 *
 * <p>The default is {@value #DEFAULT_NFS_OPTIONS}. It differs from efs-utils' {@code
 * hard,timeo=600,retrans=2} on purpose: a hard mount retries for ever, so one dead path (proxy,
 * network, mount target) hangs every process that touches the volume in uninterruptible sleep, and
 * the pod cannot even be deleted. With {@code soft} the kernel gives up and returns EIO. Over TCP
 * the NFS client backs off linearly: the first try waits {@code timeo} tenths of a second and each
 * retransmission waits {@code timeo} longer, so a request fails after {@code timeo × (1 + 2 + … +
 * (retrans + 1))} = 5 s + 10 s + 15 s = 30 s with {@code timeo=50,retrans=2}, well under a minute,
 * while a healthy EFS answers in milliseconds. {@code hard} in a PV's mountOptions restores the
 * efs-utils behaviour for that volume.
 *
 * @param nfsOptions the options, lower-case, in order
 */
public record MountDefaults(List<String> nfsOptions) {

  public static final String DEFAULT_NFS_OPTIONS =
      "nfsvers=4.1,rsize=1048576,wsize=1048576,soft,timeo=50,retrans=2,noresvport";

  /** The node flags for the defaults; NodeOptions lists them with its own. */
  public static final List<Flag> FLAGS =
      List.of(
          Flag.string(
              "nfs-mount-options",
              DEFAULT_NFS_OPTIONS,
              "comma-separated NFS options every volume starts from (replaces the defaults;"
                  + " a PV's mountOptions override them per option)"));

  public static final MountDefaults DEFAULT = parse(DEFAULT_NFS_OPTIONS);

  public MountDefaults {
    nfsOptions = List.copyOf(nfsOptions);
  }

  public static MountDefaults from(Flags flags) throws UsageException {
    String text = flags.string("nfs-mount-options");
    try {
      return parse(text);
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "invalid value '"
              + text
              + "' for flag '--nfs-mount-options': expected comma-separated NFS options ("
              + e.getMessage()
              + ")");
    }
  }

  /**
   * Parses a comma list of NFS options: lower-cased; EFS options, the options mount(8) acts on
   * itself ({@link NfsOptions#refusal}), {@code port=}, {@code ro}/{@code rw} and an option given
   * twice are refused. The empty string means none (mount.nfs4's own defaults, which are {@code
   * hard,timeo=600}).
   *
   * @throws IllegalArgumentException naming the offending option
   */
  static MountDefaults parse(String text) {
    List<String> out = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    if (text.isBlank()) {
      return new MountDefaults(out);
    }
    for (String raw : text.split(",", -1)) {
      String o = raw.strip().toLowerCase(Locale.ROOT);
      if (o.isEmpty()) {
        throw new IllegalArgumentException("an empty option");
      }
      if (MountOptions.isEfsOption(o)) {
        throw new IllegalArgumentException(
            "'" + o + "' is an EFS option: give it in a PV's mountOptions");
      }
      String refusal = NfsOptions.refusal(o);
      if (refusal != null) {
        throw new IllegalArgumentException("'" + o + "' is not supported: " + refusal);
      }
      String problem = NfsOptions.problem(o);
      if (problem != null) {
        throw new IllegalArgumentException("'" + o + "': " + problem);
      }
      String key = NfsOptions.key(o);
      if (key.equals("ro|rw")) {
        throw new IllegalArgumentException("'" + o + "': read-only comes from the volume");
      }
      if (!keys.add(key)) {
        throw new IllegalArgumentException("'" + o + "' repeats an earlier option");
      }
      out.add(o);
    }
    return new MountDefaults(out);
  }
}

package io.efscsi.supervisor.host;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * One line of {@code /proc/<pid>/mountinfo} (proc(5)), with octal escapes already decoded.
 *
 * @param mountId unique id of the mount
 * @param parentId id of the parent mount
 * @param device {@code major:minor} of the file system
 * @param root the root of the mount within its file system
 * @param mountPoint where it is mounted
 * @param mountOptions per-mount options
 * @param optionalFields {@code shared:N}, {@code master:N} … (may be empty)
 * @param fsType the file system type ({@code nfs4})
 * @param source the mount source ({@code 127.0.0.1:/})
 * @param superOptions per-superblock options ({@code addr=127.0.0.1,port=20049,…})
 */
public record MountInfo(
    int mountId,
    int parentId,
    String device,
    String root,
    String mountPoint,
    String mountOptions,
    List<String> optionalFields,
    String fsType,
    String source,
    String superOptions) {

  /** A port as the kernel writes it ({@code %u}); Integer.parseInt alone takes "+5", "-1". */
  private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

  public MountInfo {
    optionalFields = List.copyOf(optionalFields);
  }

  /** The super options as an ordered map; flags without a value map to the empty string. */
  public Map<String, String> superOptionMap() {
    Map<String, String> m = new LinkedHashMap<>();
    for (String o : superOptions.split(",")) {
      if (o.isEmpty()) {
        continue;
      }
      int eq = o.indexOf('=');
      m.put(eq < 0 ? o : o.substring(0, eq), eq < 0 ? "" : o.substring(eq + 1));
    }
    return m;
  }

  /** The value of one super option. */
  public Optional<String> superOption(String name) {
    return Optional.ofNullable(superOptionMap().get(name));
  }

  /** True for an NFS mount whose server address is the local loopback (a proxy's client). */
  public boolean isLoopbackNfs() {
    return (fsType.equals("nfs4") || fsType.equals("nfs"))
        && superOption("addr").map(a -> a.equals("127.0.0.1")).orElse(false);
  }

  /** The {@code port=} super option of a loopback NFS mount, if any and a port (0-65535). */
  public OptionalInt loopbackPort() {
    if (!isLoopbackNfs()) {
      return OptionalInt.empty();
    }
    Optional<String> port = superOption("port");
    if (port.isEmpty() || !PORT.matcher(port.get()).matches()) {
      return OptionalInt.empty();
    }
    int p = Integer.parseInt(port.get());
    return p <= 65535 ? OptionalInt.of(p) : OptionalInt.empty();
  }
}

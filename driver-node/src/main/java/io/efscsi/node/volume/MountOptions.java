package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A PV's (or StorageClass's) {@code mountOptions}, split into the EFS options we interpret and the
 * NFS options for {@code mount -t nfs4}.
 *
 * <p>Each entry may hold several options separated by commas. Options are lower-cased as the Go
 * driver does, except the values of {@code cafile=}, {@code awsprofile=}, {@code rolearn=} and
 * {@code jwtpath=} (paths, profile names and role ARNs are case-sensitive; the Go driver
 * lower-cased them too, which broke them). A later value of the same option wins.
 *
 * <p>EFS options, never passed to mount.nfs4: {@code tls}, {@code notls}, {@code iam}, {@code
 * accesspoint=}, {@code mounttargetip=}, {@code az=}, {@code region=}, {@code crossaccount}, {@code
 * cafile=}, {@code verify=}, {@code awsprofile=}, {@code rolearn=}, {@code jwtpath=}; ignored with
 * a warning: {@code tlsport=} (the supervisor picks the port), {@code awscredsuri…} (as upstream),
 * {@code ocsp}/{@code noocsp} (no OCSP, as efs-proxy), {@code nodirects3read}, {@code
 * nos3readcache}, {@code _netdev}; refused: {@code stunnel}, {@code netns=}, {@code capath=},
 * {@code azid=}. The options mount(8) acts on itself rather than the file system ({@code bind},
 * {@code remount}, propagation, {@code X-mount.*}, loop, {@code helper=}, {@code user}/{@code
 * users}, …) are refused ({@link NfsOptions#refusal}); NFS options are checked by {@link
 * NfsOptions#problem}.
 *
 * <p>For an Amazon S3 Files volume ({@link #parse(List, boolean)}) as efs-utils' mount.s3files and
 * the Go driver: {@code azid=} names the mount target's zone id; {@code stunnel} is refused with
 * the Go driver's message, {@code az=}, {@code crossaccount} and {@code notls} with mount.s3files'
 * (it does not support them); {@code nodirects3read} and {@code nos3readcache} are accepted and
 * have no effect (our proxy never reads from S3 directly, so it has no read cache to turn off);
 * {@code nfsvers=4.2} is allowed and {@code 4.0} refused.
 *
 * @param tls {@code tls} given
 * @param notls {@code notls} given
 * @param iam {@code iam} given
 * @param accessPointId {@code accesspoint=}
 * @param mountTargetIp {@code mounttargetip=}
 * @param az {@code az=}: an availability zone name or id for the zonal DNS name
 * @param region {@code region=}: the file system's region when it is not the node's
 * @param crossAccount {@code crossaccount} given
 * @param caFile {@code cafile=}
 * @param verify {@code verify=}
 * @param awsProfile {@code awsprofile=}
 * @param roleArn {@code rolearn=}
 * @param jwtPath {@code jwtpath=}
 * @param nfs the NFS options, de-duplicated, in first-seen order
 * @param warnings what was ignored, for the log
 * @param azId {@code azid=} (S3 Files only): the zone id of the mount target's DNS name
 */
public record MountOptions(
    boolean tls,
    boolean notls,
    boolean iam,
    Optional<String> accessPointId,
    Optional<String> mountTargetIp,
    Optional<String> az,
    Optional<String> region,
    boolean crossAccount,
    Optional<Path> caFile,
    OptionalInt verify,
    Optional<String> awsProfile,
    Optional<String> roleArn,
    Optional<String> jwtPath,
    List<String> nfs,
    List<String> warnings,
    Optional<String> azId) {

  private static final Set<String> EFS_FLAGS =
      Set.of(
          "tls",
          "notls",
          "iam",
          "crossaccount",
          "ocsp",
          "noocsp",
          "stunnel",
          "nodirects3read",
          "nos3readcache",
          "_netdev");
  private static final Set<String> EFS_KEYS =
      Set.of(
          "accesspoint",
          "mounttargetip",
          "az",
          "region",
          "tlsport",
          "cafile",
          "verify",
          "awsprofile",
          "rolearn",
          "jwtpath",
          "netns",
          "capath",
          "azid");
  private static final Set<String> CASE_KEPT = Set.of("cafile", "awsprofile", "rolearn", "jwtpath");
  private static final Pattern REGION = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?");
  private static final Pattern ZONE = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

  public MountOptions {
    nfs = List.copyOf(nfs);
    warnings = List.copyOf(warnings);
  }

  /** Whether {@code option} (lower-case) is one of the EFS options above, not an NFS one. */
  static boolean isEfsOption(String option) {
    int eq = option.indexOf('=');
    String name = eq < 0 ? option : option.substring(0, eq);
    return EFS_FLAGS.contains(name) || EFS_KEYS.contains(name) || name.startsWith("awscredsuri");
  }

  /** Parses mount flags; INVALID_ARGUMENT naming the option when one is wrong or refused. */
  public static MountOptions parse(List<String> mountFlags) {
    return parse(mountFlags, false);
  }

  /** Parses the mount flags of an Amazon EFS volume, or of an Amazon S3 Files one. */
  public static MountOptions parse(List<String> mountFlags, boolean s3files) {
    Builder b = new Builder(s3files);
    for (String entry : mountFlags) {
      for (String raw : entry.split(",")) {
        String o = raw.strip();
        if (!o.isEmpty()) {
          b.add(lowerCase(o));
        }
      }
    }
    return b.build();
  }

  private static String lowerCase(String option) {
    int eq = option.indexOf('=');
    String name = (eq < 0 ? option : option.substring(0, eq)).toLowerCase(Locale.ROOT);
    if (eq < 0) {
      return name;
    }
    String value = option.substring(eq + 1);
    return name + "=" + (CASE_KEPT.contains(name) ? value : value.toLowerCase(Locale.ROOT));
  }

  private static final class Builder {
    final boolean s3files;
    Optional<String> azId = Optional.empty();
    boolean tls;
    boolean notls;
    boolean iam;
    boolean crossAccount;
    Optional<String> accessPoint = Optional.empty();
    Optional<String> mountTargetIp = Optional.empty();
    Optional<String> az = Optional.empty();
    Optional<String> region = Optional.empty();
    Optional<Path> caFile = Optional.empty();
    OptionalInt verify = OptionalInt.empty();
    Optional<String> awsProfile = Optional.empty();
    Optional<String> roleArn = Optional.empty();
    Optional<String> jwtPath = Optional.empty();
    List<String> nfs = new ArrayList<>();
    List<String> warnings = new ArrayList<>();

    Builder(boolean s3files) {
      this.s3files = s3files;
    }

    void add(String o) {
      if (o.startsWith("awscredsuri")) {
        warnings.add("awscredsuri mount option is not supported by efs-csi-driver.");
        return;
      }
      int eq = o.indexOf('=');
      String name = eq < 0 ? o : o.substring(0, eq);
      String value = eq < 0 ? "" : o.substring(eq + 1);
      if (EFS_KEYS.contains(name) && eq < 0) {
        throw invalid(o, "expected " + name + "=value");
      }
      if (EFS_FLAGS.contains(name) && eq >= 0) {
        throw invalid(o, "expected " + name + " without a value");
      }
      if (s3files && s3filesOption(o, name, value)) {
        return;
      }
      switch (name) {
        case "tls" -> tls = true;
        case "notls" -> notls = true;
        case "iam" -> iam = true;
        case "crossaccount" -> crossAccount = true;
        case "accesspoint" -> {
          if (!VolumeHandle.ACCESS_POINT_ID.matcher(value).matches()) {
            throw invalid(o, "expected an access point ID of the form 'fsap-[0-9a-f]{8,40}'");
          }
          accessPoint = Optional.of(value);
        }
        case "mounttargetip" -> {
          if (!GoSyntax.isIpLiteral(value)) {
            throw invalid(o, "expected an IPv4 or IPv6 address");
          }
          mountTargetIp = Optional.of(value);
        }
        case "az" -> {
          if (!ZONE.matcher(value).matches()) {
            throw invalid(o, "expected an availability zone name or id such as us-east-1a");
          }
          az = Optional.of(value);
        }
        case "region" -> {
          if (!REGION.matcher(value).matches()) {
            throw invalid(o, "expected a region such as us-east-1");
          }
          region = Optional.of(value);
        }
        case "cafile" -> caFile = Optional.of(Path.of(absolutePath(o, value)));
        case "verify" -> {
          if (!value.matches("[0-4]")) {
            throw invalid(o, "expected a verification level 0-4 (0 turns verification off)");
          }
          verify = OptionalInt.of(Integer.parseInt(value));
        }
        case "awsprofile" -> awsProfile = Optional.of(nonEmpty(o, value));
        case "rolearn" -> roleArn = Optional.of(nonEmpty(o, value));
        case "jwtpath" -> jwtPath = Optional.of(absolutePath(o, value));
        case "tlsport" ->
            warnings.add("mount option " + o + " ignored: the supervisor picks the proxy's port");
        case "ocsp", "noocsp" ->
            warnings.add("mount option " + o + " ignored: no OCSP checking (as efs-proxy)");
        case "nodirects3read", "nos3readcache" ->
            warnings.add("mount option " + o + " ignored: it applies to S3 Files only");
        case "_netdev" ->
            warnings.add("mount option " + o + " ignored: the kubelet orders network mounts");
        case "stunnel" ->
            throw refused(o, "there is no stunnel mode; the supervised proxy carries every mount");
        case "netns" ->
            throw refused(o, "the proxy and the mount live in the node's network namespace");
        case "capath" -> throw refused(o, "give a CA bundle file with cafile= instead");
        case "azid" -> throw refused(o, "it applies to S3 Files only");
        default -> {
          String refusal = NfsOptions.refusal(o);
          if (refusal != null) {
            throw refused(o, refusal);
          }
          String problem = NfsOptions.problem(o);
          if (problem != null) {
            throw invalid(o, problem);
          }
          nfs = NfsOptions.merge(nfs, List.of(o));
        }
      }
    }

    /** The options an S3 Files volume treats its own way; false for the others. */
    private boolean s3filesOption(String o, String name, String value) {
      switch (name) {
        case "stunnel" ->
            throw new DriverException(
                DriverException.Kind.INVALID_ARGUMENT,
                "stunnel mount option is not supported by S3 Files file system.");
        case "az", "crossaccount", "notls" ->
            throw new DriverException(
                DriverException.Kind.INVALID_ARGUMENT,
                "Unsupported mount options detected: \"" + name + "\"");
        case "azid" -> {
          if (!ZONE.matcher(value).matches()) {
            throw invalid(o, "expected an availability zone id such as use1-az1");
          }
          azId = Optional.of(value);
        }
        case "nodirects3read", "nos3readcache" ->
            warnings.add(
                "mount option "
                    + o
                    + " accepted with no effect: this driver's proxy never reads from S3"
                    + " directly (no read bypass, no read cache)");
        case "nfsvers", "vers" -> {
          if (value.equals("4.0")) {
            throw new DriverException(
                DriverException.Kind.INVALID_ARGUMENT,
                "NFSv4.0 is not supported for S3 Files mounts");
          }
          if (!value.equals("4.2")) {
            return false;
          }
          nfs = NfsOptions.merge(nfs, List.of(o));
        }
        default -> {
          return false;
        }
      }
      return true;
    }

    MountOptions build() {
      return new MountOptions(
          tls,
          notls,
          iam,
          accessPoint,
          mountTargetIp,
          az,
          region,
          crossAccount,
          caFile,
          verify,
          awsProfile,
          roleArn,
          jwtPath,
          nfs,
          warnings,
          azId);
    }
  }

  /** An absolute path with nothing a file name cannot hold (a NUL byte, say). */
  private static String absolutePath(String option, String value) {
    if (!value.startsWith("/")) {
      throw invalid(option, "expected an absolute path");
    }
    if (value.chars().anyMatch(c -> c == 0 || Character.isISOControl(c))) {
      throw invalid(option, "expected a path without control characters");
    }
    try {
      Path.of(value);
    } catch (java.nio.file.InvalidPathException e) {
      throw invalid(option, "expected a valid path (" + e.getReason() + ")");
    }
    return value;
  }

  private static String nonEmpty(String option, String value) {
    if (value.isEmpty()) {
      throw invalid(option, "expected a value");
    }
    return value;
  }

  private static DriverException invalid(String option, String expected) {
    return new DriverException(
        DriverException.Kind.INVALID_ARGUMENT,
        "mount option '" + option + "' is invalid: " + expected);
  }

  private static DriverException refused(String option, String why) {
    return new DriverException(
        DriverException.Kind.INVALID_ARGUMENT,
        "mount option '" + option + "' is not supported by this driver: " + why);
  }
}

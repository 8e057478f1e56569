package io.efscsi.node.events;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a kubelet target path names: {@code …/pods/<pod uid>/volumes/kubernetes.io~csi/<pv>/mount}.
 *
 * @param podUid the uid of the pod the volume is published for
 * @param volume the PersistentVolume's name
 */
public record PodTarget(String podUid, String volume) {

  private static final Pattern PATH =
      Pattern.compile(".*/pods/([^/]+)/volumes/kubernetes\\.io~csi/([^/]+)/mount");

  /** The pod uid and PV name of a kubelet target path, if it is one. */
  public static Optional<PodTarget> parse(String targetPath) {
    Matcher m = PATH.matcher(targetPath);
    return m.matches() ? Optional.of(new PodTarget(m.group(1), m.group(2))) : Optional.empty();
  }
}

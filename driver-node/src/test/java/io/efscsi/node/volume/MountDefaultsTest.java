package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MountDefaultsTest {

  private final FlagSet set = new FlagSet().addAll(MountDefaults.FLAGS);

  private MountDefaults of(Map<String, String> values) throws UsageException {
    return MountDefaults.from(Flags.of(set, values));
  }

  @Test
  void defaultsAreSoftAndFailWithinThirtySeconds() throws UsageException {
    MountDefaults d = of(Map.of());
    assertEquals(
        List.of(
            "nfsvers=4.1",
            "rsize=1048576",
            "wsize=1048576",
            "soft",
            "timeo=50",
            "retrans=2",
            "noresvport"),
        d.nfsOptions());
    assertEquals(d, MountDefaults.DEFAULT);
    // Linear backoff over TCP: timeo × (1 + 2 + … + (retrans + 1)) tenths of a second.
    int timeo = 50;
    int retrans = 2;
    int tenths = 0;
    for (int i = 1; i <= retrans + 1; i++) {
      tenths += timeo * i;
    }
    assertEquals(300, tenths);
  }

  @Test
  void theFlagReplacesTheDefaults() throws UsageException {
    assertEquals(
        List.of("nfsvers=4.1", "hard", "timeo=600", "retrans=2"),
        of(Map.of("nfs-mount-options", " NFSVERS=4.1, hard ,timeo=600,retrans=2")).nfsOptions());
    assertEquals(List.of(), of(Map.of("nfs-mount-options", "")).nfsOptions());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "soft,,timeo=50|invalid value 'soft,,timeo=50' for flag '--nfs-mount-options': expected comma-separated NFS options (an empty option)",
        "soft,tls|invalid value 'soft,tls' for flag '--nfs-mount-options': expected comma-separated NFS options ('tls' is an EFS option: give it in a PV's mountOptions)",
        "soft,hard|invalid value 'soft,hard' for flag '--nfs-mount-options': expected comma-separated NFS options ('hard' repeats an earlier option)",
        "nfsvers=4.1,vers=4.0|invalid value 'nfsvers=4.1,vers=4.0' for flag '--nfs-mount-options': expected comma-separated NFS options ('vers=4.0' repeats an earlier option)",
        "timeo=abc|invalid value 'timeo=abc' for flag '--nfs-mount-options': expected comma-separated NFS options ('timeo=abc': expected a positive integer)",
        "port=2049|invalid value 'port=2049' for flag '--nfs-mount-options': expected comma-separated NFS options ('port=2049': the node sets port= to its proxy's local port)",
        "soft,ro|invalid value 'soft,ro' for flag '--nfs-mount-options': expected comma-separated NFS options ('ro': read-only comes from the volume)",
        "soft,Bind|invalid value 'soft,Bind' for flag '--nfs-mount-options': expected comma-separated NFS options ('bind' is not supported: it makes mount(8) bind another path instead of mounting the volume; the node binds the staged volume into each pod itself)",
      })
  void badValuesNameTheFlag(String value, String message) {
    UsageException e =
        assertThrows(UsageException.class, () -> of(Map.of("nfs-mount-options", value)));
    assertEquals(message, e.getMessage());
  }
}

package io.efscsi.supervisor.host;

import java.io.IOException;
import java.util.List;

/** The kernel's mount table as seen by this process. */
public interface MountTable {

  /** One consistent-as-possible snapshot, read in one pass. */
  List<MountInfo> read() throws IOException;
}

package io.efscsi.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the driver's cluster classes stand on: a {@link ClusterDriver} with a release of their own,
 * installed before the class's first test and removed after its last, on the one cluster these
 * classes share ({@link ClusterClassOrder} runs them one after the other; the last closes it, so
 * that no cluster outlives them: another cluster suite may come next).
 */
@ExtendWith(BuiltImages.class)
abstract class ClusterDriverFixture {

  static ClusterDriver d;

  @BeforeAll
  static void startCluster(TestInfo info) throws Exception {
    d = ClusterDriver.start(info.getTestClass().map(Class::getSimpleName).orElse("cluster"));
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (d != null) {
      ClusterDriver closing = d;
      d = null;
      closing.close();
    }
  }
}

package io.efscsi.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the driver's cluster classes stand on: a {@link ClusterDriver} of their own, started before
 * the class's first test and closed after its last, so that no cluster outlives its class (failsafe
 * runs the classes one at a time, another cluster suite may come next).
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

package io.efscsi.launcher;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.AccessTarget;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which module and package may use which (docs/architecture.md). The Maven enforcer bans the
 * forbidden libraries per module; these rules hold at the package level across all modules.
 */
class LayeringTest {

  private static JavaClasses all;

  @BeforeAll
  static void importProductionClasses() {
    all =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.efscsi");
  }

  @Test
  void proxyCoreSeesNettyAndLoggingOnly() {
    classes()
        .that()
        .resideInAPackage("io.efscsi.proxy..")
        .and()
        .resideOutsideOfPackage("io.efscsi.proxy.logging..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("io.efscsi.proxy..", "java..", "javax..", "io.netty..", "org.slf4j..")
        .allowEmptyShould(true)
        .check(all);
  }

  @Test
  void onlyTheProxysLoggingSetupSeesLogback() {
    classes()
        .that()
        .resideInAPackage("io.efscsi.proxy.logging..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "io.efscsi.proxy.logging..",
            "java..",
            "org.slf4j..",
            "ch.qos.logback.classic..",
            "ch.qos.logback.core..")
        .allowEmptyShould(true)
        .check(all);
  }

  /**
   * Of the proxy, the supervisor sees its config, the shared JSON and the probe it makes of a mount
   * target itself (to tell a broken proxy from an unreachable target), never the proxy's insides.
   */
  @Test
  void mountSupervisorSeesOnlyProxyConfigTypes() {
    classes()
        .that()
        .resideInAPackage("io.efscsi.supervisor..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "io.efscsi.supervisor..",
            "io.efscsi.proxy.config..",
            "io.efscsi.proxy.json..",
            "io.efscsi.proxy.probe..",
            "java..",
            "javax..",
            "jnr..",
            "org.slf4j..")
        .allowEmptyShould(true)
        .check(all);
  }

  /**
   * The node plugin uses the supervisor through its face: the service, its config, lease, status
   * and listener types and its factory (the top-level package), the host layer (mounts, the mount
   * table, commands) and the read-only view of its state. How proxies are launched, placed in
   * cgroups, recorded and reconciled stays inside.
   */
  @Test
  void nodeUsesTheSupervisorThroughItsFaceOnly() {
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.node..")
        .should()
        .dependOnClassesThat(
            JavaClass.Predicates.resideInAPackage("io.efscsi.supervisor..")
                .and(
                    DescribedPredicate.not(
                        JavaClass.Predicates.resideInAnyPackage(
                            "io.efscsi.supervisor",
                            "io.efscsi.supervisor.host",
                            "io.efscsi.supervisor.status"))))
        .because("node sees the supervisor's face only (issue 28)")
        .check(all);
  }

  /**
   * Node's top level is wiring and the CSI service; the packages that do the work receive what they
   * need and never point back up at it (issue 28).
   */
  @Test
  void nodePartsDoNotReachBackToTheirWiring() {
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.node..")
        .and()
        .resideOutsideOfPackage("io.efscsi.node")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.efscsi.node")
        .because("node's parts receive their collaborators from NodePlugin (issue 28)")
        .check(all);
  }

  /** The classes of the node side's real adapters: only HostAdapters makes them. */
  private static final Set<String> NODE_REAL_ADAPTERS =
      Set.of(
          "io.efscsi.supervisor.host.CommandMounter",
          "io.efscsi.supervisor.host.ProcMountTable",
          "io.efscsi.node.volume.InetAddressHostResolver",
          "io.efscsi.node.volume.AwsMountTargetLookup",
          "io.efscsi.node.iam.SdkCredentialsProviders",
          "io.fabric8.kubernetes.client.KubernetesClientBuilder");

  /** A real adapter's constructor (not its own {@code this(...)}), or Supervisors.onThisHost. */
  private static boolean makesARealAdapter(JavaAccess<?> a) {
    String owner = a.getTargetOwner().getName();
    if (owner.equals("io.efscsi.supervisor.Supervisors")) {
      return a.getName().equals("onThisHost");
    }
    boolean constructor =
        a.getTarget() instanceof AccessTarget.ConstructorCallTarget
            || a.getTarget() instanceof AccessTarget.ConstructorReferenceTarget;
    return constructor
        && NODE_REAL_ADAPTERS.contains(owner)
        && !a.getOriginOwner().equals(a.getTargetOwner());
  }

  /**
   * Composition in one place: of the node side, only {@code HostAdapters} (which NodePlugin calls)
   * makes a real adapter or the supervisor on this host; every other class receives them.
   */
  @Test
  void onlyHostAdaptersMakesTheNodesRealAdapters() {
    DescribedPredicate<JavaAccess<?>> makesARealAdapter =
        DescribedPredicate.describe(
            "a real adapter's constructor, or Supervisors.onThisHost",
            LayeringTest::makesARealAdapter);
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.node..")
        .and()
        .doNotHaveFullyQualifiedName("io.efscsi.node.HostAdapters")
        .should()
        .accessTargetWhere(makesARealAdapter)
        .because("NodePlugin builds the node's object graph, in one place (issue 28)")
        .check(all);
  }

  /**
   * The supervisor builds its parts and passes them what they need (a {@code ProxyContext}); no
   * part holds the supervisor itself, so arrows inside the module run one way. Only the factory on
   * real adapters ({@code Supervisors}) and the supervisor's own nested types name it.
   */
  @Test
  void noPartOfTheSupervisorReachesBackToIt() {
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.supervisor..")
        .and()
        .doNotHaveFullyQualifiedName("io.efscsi.supervisor.ProxySupervisor")
        .and()
        .doNotHaveFullyQualifiedName("io.efscsi.supervisor.Supervisors")
        .and(
            DescribedPredicate.not(
                JavaClass.Predicates.belongToAnyOf(io.efscsi.supervisor.ProxySupervisor.class)))
        .should()
        .dependOnClassesThat()
        .haveFullyQualifiedName("io.efscsi.supervisor.ProxySupervisor")
        .because("the supervisor's parts get their collaborators passed in (issue 28)")
        .check(all);
  }

  @Test
  void commonKnowsNoSideAndNoCloud() {
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.common..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.efscsi.controller..",
            "io.efscsi.node..",
            "io.efscsi.supervisor..",
            "io.efscsi.proxy..",
            "io.efscsi.launcher..",
            "software.amazon..",
            "io.fabric8..",
            "ch.qos.logback..")
        .check(all);
  }

  @Test
  void controllerAndNodeDoNotSeeEachOther() {
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.controller..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.efscsi.node..",
            "io.efscsi.supervisor..",
            "io.efscsi.proxy..",
            "io.efscsi.launcher..")
        .check(all);
    noClasses()
        .that()
        .resideInAPackage("io.efscsi.node..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.efscsi.controller..", "io.efscsi.launcher..")
        .check(all);
  }

  @Test
  void generatedCsiCodeDependsOnNothingOfOurs() {
    classes()
        .that()
        .resideInAPackage("io.efscsi.csi.v1..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "io.efscsi.csi.v1..",
            "com.google.protobuf..",
            "io.grpc..",
            "java..",
            "javax..",
            "com.google.common..")
        .check(all);
  }

  /**
   * The demo module (the demo, the controller benchmark, the AOT training, the NFS lab) is on the
   * class path of its own commands only (lib/demo/): the launcher and every plugin module work
   * without it.
   */
  @Test
  void theLauncherAndTheProductDoNotKnowTheDemo() {
    noClasses()
        .that()
        .resideOutsideOfPackage("io.efscsi.demo..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.efscsi.demo..")
        .because("the demo module is not on the plugins' class path (issue 28)")
        .check(all);
  }

  @Test
  void onlyTheDemoModuleKnowsTheEmulator() {
    noClasses()
        .that()
        .resideOutsideOfPackages("io.efscsi.demo..", "io.efscsi.emulator..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.efscsi.emulator..")
        .because("the emulator is test support, in lib/demo/ beside the demo module")
        .check(all);
  }

  @Test
  void logbackOnlyInLaunchableCode() {
    // the driver's launcher, the demo module's commands (DemoMain) and the proxy process's logging
    // setup (ProxyMain is launchable too)
    noClasses()
        .that()
        .resideOutsideOfPackages(
            "io.efscsi.launcher..", "io.efscsi.demo..", "io.efscsi.proxy.logging..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("ch.qos.logback..")
        .check(all);
  }
}

package io.efscsi.node.handback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** efs-utils.conf read as Python's ConfigParser reads it, for the lines mount.efs copies. */
class EfsUtilsConfTest {

  private static final EfsUtilsConf CONF =
      EfsUtilsConf.parse(
          """
          # a comment
          [DEFAULT]
          logging_level = INFO
          ; another comment
          [mount]
          Region: eu-west-1
          retry_nfs_mount_command_timeout_sec = soon
          dns_name_format = {az}.{fs_id}.efs.{region}
              .{dns_name_suffix}

          [cloudwatch-log]
          enabled = On
          # retention_in_days = 14
          retention_in_days = 30
          [empty]
          """);

  @Test
  void keysAreCaseFreeValuesStrippedAndDefaultsSeenInEverySection() {
    assertEquals(Optional.of("eu-west-1"), CONF.get("mount", "region"));
    assertEquals(Optional.of("eu-west-1"), CONF.get("mount", "REGION"));
    assertEquals(Optional.of("INFO"), CONF.get("cloudwatch-log", "logging_level"));
    assertEquals(Optional.of("INFO"), CONF.get("empty", "logging_level"));
    assertEquals(Optional.empty(), CONF.get("proxy", "logging_level"), "no such section");
    assertEquals(
        Optional.of("{az}.{fs_id}.efs.{region}\n.{dns_name_suffix}"),
        CONF.get("mount", "dns_name_format"),
        "an indented line continues the value");
  }

  @Test
  void sectionsAreTheBracketedOnesButDefault() {
    assertTrue(CONF.hasSection("mount"));
    assertTrue(CONF.hasSection("empty"));
    assertFalse(CONF.hasSection("DEFAULT"));
    assertFalse(CONF.hasSection("proxy"));
  }

  @Test
  void booleansAndIntegersAsConfigParserReadsThem() {
    assertEquals(Optional.of(true), CONF.bool("cloudwatch-log", "enabled"));
    assertEquals(Optional.empty(), CONF.bool("mount", "region"), "not one of its words");
    assertEquals(Optional.of(30), CONF.integer("cloudwatch-log", "retention_in_days"));
    assertEquals(Optional.empty(), CONF.integer("mount", "retry_nfs_mount_command_timeout_sec"));
    assertEquals("False", EfsUtilsConf.python(false));
  }

  @Test
  void theGoDriversRenderedConfSaysWhatItsTemplateSays() {
    assertEquals(Optional.of(false), EfsUtilsConf.GO_DRIVER.bool("cloudwatch-log", "enabled"));
    assertEquals(
        Optional.empty(), EfsUtilsConf.GO_DRIVER_BEFORE_3_1.bool("cloudwatch-log", "enabled"));
    assertEquals(EfsUtilsConf.GO_DRIVER, GoDriverImage.of("v3.4.1").renderedConf());
    assertEquals(EfsUtilsConf.GO_DRIVER_BEFORE_3_1, GoDriverImage.of("v3.0.0").renderedConf());
    assertEquals(
        Optional.of("/aws/efs/utils"),
        EfsUtilsConf.GO_DRIVER.get("cloudwatch-log", "log_group_name"));
  }
}

package io.efscsi.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.proxy.json.Json;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The demo's --json summary, written by the shared JSON writer and read back by its reader. */
class DemoReportTest {

  @Test
  void theSummaryIsOneLineOfJsonWithOnlyTheFiguresThatApply() {
    DemoReport report = new DemoReport(new PrintStream(PrintStream.nullOutputStream()));
    report.step("CreateVolume", 12_000_000, -1, -1, -1, "");
    report.step("heal: kill -9 mid-transfer", 5_000_000, 64, 1024, 1, "a \"quoted\"\nnote");
    report.heal(20049, 20049, 931, true);
    String json = report.json(true, "none", "/tmp/demo.log");
    assertEquals(1, json.lines().count(), json);
    assertEquals(
        Map.of(
            "ok",
            true,
            "kernelNfsClient",
            "none",
            "driverLog",
            "/tmp/demo.log",
            "steps",
            List.of(
                Map.of("step", "CreateVolume", "millis", 12L),
                Map.of(
                    "step",
                    "heal: kill -9 mid-transfer",
                    "millis",
                    5L,
                    "bytes",
                    64L,
                    "proxyRssBytes",
                    1024L,
                    "proxyRestarts",
                    1L,
                    "note",
                    "a \"quoted\"\nnote")),
            "heal",
            Map.of(
                "portBefore",
                20049L,
                "portAfter",
                20049L,
                "samePort",
                true,
                "killToServingMillis",
                931L,
                "byteExact",
                true)),
        Json.parse(json));
  }

  @Test
  void withoutAHealTheSummaryHasNoHealObject() {
    DemoReport report = new DemoReport(new PrintStream(PrintStream.nullOutputStream()));
    assertEquals(
        "{\"ok\":false,\"kernelNfsClient\":\"k\",\"driverLog\":\"l\",\"steps\":[]}",
        report.json(false, "k", "l"));
  }
}

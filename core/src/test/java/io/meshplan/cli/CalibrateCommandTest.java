package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CalibrateCommandTest {
  @TempDir Path dir;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return Main.run(new PrintWriter(out), new PrintWriter(err), args);
  }

  private static String fixture(String name) {
    try {
      return Path.of(CalibrateCommandTest.class.getResource("/calibrate/" + name).toURI())
          .toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void writesAProfileAndSummarizes() throws IOException {
    Path profile = dir.resolve("profile.yaml");
    int code = run("calibrate", fixture("all_reduce_perf_8gpu_a100.log"),
        fixture("all_reduce_perf_16gpu_2node_tagged.log"), "--cluster", "2x8:a100-80gb",
        "--out", profile.toString());
    assertThat(code).isEqualTo(ExitCodes.OK);
    assertThat(err.toString()).isEmpty();
    assertThat(out.toString()).contains("2 entries from 61 points in 2 files")
        .contains("all_reduce     intra-node     8").contains("all_reduce     inter-node    16");
    assertThat(Files.readString(profile)).startsWith("version: 1\n")
        .contains("cluster: \"2x8:a100-80gb:ib-hdr200\"");
  }

  @Test
  void jsonHasOnePointPerRow() throws IOException {
    int code = run("calibrate", fixture("all_gather_perf_8gpu_h100.log"), "--cluster",
        "1x8:h100-80gb", "--out", dir.resolve("p.json").toString(), "--json");
    assertThat(code).isEqualTo(ExitCodes.OK);
    JsonNode root = new ObjectMapper().readTree(out.toString());
    assertThat(root.get("points")).hasSize(24);
    JsonNode p = root.get("points").get(0);
    for (String field : new String[] {"file", "line", "collective", "gpus", "bytes",
        "measuredSeconds", "fittedSeconds"}) {
      assertThat(p.has(field)).as(field).isTrue();
    }
    assertThat(p.get("collective").asText()).isEqualTo("all_gather");
    assertThat(p.get("bytes").asLong()).isEqualTo(1024);
  }

  @Test
  void reportListsEveryPointWithRelativeError() {
    int code = run("calibrate", fixture("alpa_profile_communication_4x8_a100.txt"), "--cluster",
        "4x8:a100-80gb", "--out", dir.resolve("p.yaml").toString(), "--report");
    assertThat(code).isEqualTo(ExitCodes.OK);
    // 15 Alpa lines, each listed with its line number under the one file's name.
    assertThat(out.toString()).contains("points of alpa_profile_communication_4x8_a100.txt:\n");
    long rows = out.toString().lines().filter(l -> l.matches("\\d+ +(all_reduce|send_recv) .*"))
        .count();
    assertThat(rows).isEqualTo(15);
    assertThat(out.toString()).contains("|relative error| over 15 sized points");
  }

  @Test
  void badRowsWarnButTheRunSucceeds() {
    int code = run("calibrate", fixture("all_reduce_perf_na_rows.log"),
        fixture("ib_write_bw_unknown_tool.log"), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("p.yaml").toString());
    assertThat(code).isEqualTo(ExitCodes.OK);
    assertThat(err.toString()).contains("all_reduce_perf_na_rows.log:30:")
        .contains("all_reduce_perf_na_rows.log:33:").contains("ib_write_bw_unknown_tool.log:1:")
        .doesNotContain("Exception");
  }

  @Test
  void nothingParsedIsBadInput() {
    int code = run("calibrate", fixture("ib_write_bw_unknown_tool.log"), "--cluster",
        "1x8:a100-80gb", "--out", dir.resolve("p.yaml").toString());
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString()).contains("meshplan: error: no measurements found")
        .doesNotContain("\tat ");
    assertThat(Files.exists(dir.resolve("p.yaml"))).isFalse();
  }

  @Test
  void missingFileIsBadInput() {
    int code = run("calibrate", dir.resolve("nope.log").toString(), "--cluster",
        "1x8:a100-80gb", "--out", dir.resolve("p.yaml").toString());
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString().strip().lines()).hasSize(1);
    assertThat(err.toString()).contains("nope.log: no such file");
  }

  /** Without --cluster, the refusal says why it is needed, though --help lists it optional. */
  @Test
  void theClusterIsNeededButForTheFolds() {
    CliRun.of("calibrate", fixture("all_gather_perf_8gpu_h100.log"), "--out",
        dir.resolve("q.yaml").toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        "--cluster is needed: the cluster the logs were measured on (only --train --folds goes "
            + "without");
  }

  @Test
  void outEqualToAnInputIsRefusedAndTheInputKept() throws IOException {
    Path in = dir.resolve("all_reduce_perf.log");
    Files.copy(Path.of(fixture("all_reduce_perf_8gpu_a100.log")), in);
    String before = Files.readString(in);
    int code = run("calibrate", in.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve(".").resolve("all_reduce_perf.log").toString());
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString()).contains("is also an input");
    assertThat(Files.readString(in)).isEqualTo(before);
  }

  @Test
  void badClusterListsValidNames() {
    int code = run("calibrate", fixture("all_reduce_perf_8gpu_a100.log"), "--cluster",
        "1x8:a100", "--out", dir.resolve("p.yaml").toString());
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString()).contains("unknown gpu 'a100'").contains("a100-80gb");
  }
}

package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A calibration profile changes the plan where it should: on a 2x8 mesh of a 2x8 H100 cluster,
 * mesh axis 0 crosses the two nodes and axis 1 stays inside one. The hand-written profiles in
 * {@code src/test/resources/profiles} make one level 100x slower than the other.
 */
class ShardProfileTest {
  private static JsonNode plan(String profile) throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    String path = Path.of("core/src/test/resources/profiles", profile).toString();
    int code = Main.run(new PrintWriter(out), new PrintWriter(err), "shard", "--model",
        "alpa-mlp", "--batch", "1024", "--hidden", "4096", "--mesh", "2x8", "--cluster",
        "2x8:h100-80gb", "--profile", path, "--json");
    assertThat(code).as(err.toString()).isEqualTo(0);
    return new ObjectMapper().readTree(out.toString());
  }

  private static int allReducesOn(JsonNode plan, int axis) {
    int n = 0;
    for (JsonNode ins : plan.get("instructions")) {
      String s = ins.get("strategy").asText();
      int at = s.indexOf("(allreduce @ ");
      if (at >= 0 && s.substring(at).contains(Integer.toString(axis))) {
        n++;
      }
    }
    return n;
  }

  @Test
  void slowInterNodeLinksMoveTheAllReducesInsideTheNodes() throws Exception {
    JsonNode slowInter = plan("slow-inter-node.yaml");
    assertThat(allReducesOn(slowInter, 0)).isZero();
    assertThat(allReducesOn(slowInter, 1)).isPositive();
    JsonNode slowIntra = plan("slow-intra-node.yaml");
    assertThat(allReducesOn(slowIntra, 1)).isZero();
    assertThat(allReducesOn(slowIntra, 0)).isPositive();
    // Costs are seconds: an all-reduce of a 1024x4096 fp32 activation (16 MiB) on 8 GPUs at
    // 200 GB/s bus bandwidth takes 1e-5 + 1.75 * 16777216 / 2e11 = 0.157 ms; the plan costs
    // between that and a few milliseconds.
    assertThat(slowInter.get("objective").asDouble()).isBetween(1.5e-4, 5e-3);
  }

  @Test
  void profileNeedsCluster() {
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "shard",
        "--model", "alpa-mlp", "--mesh", "2x8", "--profile", "x.yaml");
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString()).contains("--profile needs --cluster");
  }
}

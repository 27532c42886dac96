package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** {@code meshplan shard} end to end: the JSON contract, exit codes, one-line errors. */
class ShardCliTest {
  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  @Test
  void jsonCarriesTheContractFields() throws Exception {
    CliRun r = run("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--alpha", "1,1", "--beta",
        "1,0.01", "--memory", "1000MB", "--json");
    assertThat(r.code()).isEqualTo(0);
    JsonNode root = new ObjectMapper().readTree(r.out());
    assertThat(root.get("status").asText()).isEqualTo("OPTIMAL");
    assertThat(root.get("objective").isNumber()).isTrue();
    assertThat(root.get("solveSeconds").isNumber()).isTrue();
    JsonNode ins = root.get("instructions");
    // The 2-layer MLP step has 16 instructions (4 parameters, 5 dots, 3 subtracts, a constant,
    // a broadcast, a multiply and the tuple).
    assertThat(ins.size()).isEqualTo(16);
    for (JsonNode i : ins) {
      assertThat(i.has("name") && i.has("op") && i.has("shape") && i.has("strategy")
          && i.has("sharding")).isTrue();
      assertThat(i.get("sharding").asText()).startsWith("{");
    }
  }

  @Test
  void costsAddColumnsAndJsonHasTheUnit() throws Exception {
    CliRun t = run("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--alpha", "1,1", "--beta",
        "1,0.01", "--memory", "1000MB", "--costs");
    assertThat(t.code()).isEqualTo(0);
    assertThat(t.out().lines().findFirst().orElseThrow())
        .contains("compute", "comm", "reshard", "bytes/axis");
    assertThat(t.out()).contains("bytes sent per GPU by mesh axis: 6.554e+04,2.621e+05");
    CliRun j = run("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--alpha", "1,1", "--beta",
        "1,0.01", "--memory", "1000MB", "--json");
    JsonNode root = new ObjectMapper().readTree(j.out());
    assertThat(root.get("unit").asText()).isEqualTo("ALPA_UNITS");
    assertThat(root.get("bound").isNumber()).isTrue();
    assertThat(root.get("instructions").get(5).get("communicationBytesPerAxis").size())
        .isEqualTo(2);
  }

  @Test
  void sameInputGivesSamePlan() {
    String[] args = {"shard", "--model", "llama2-7b", "--layers", "2", "--seq", "128", "--mesh",
        "2x4", "--alpha", "1,1", "--beta", "1,0.01", "--memory", "32GiB"};
    String a = run(args).out().replaceAll("time: .*", "");
    String b = run(args).out().replaceAll("time: .*", "");
    assertThat(a).isEqualTo(b).isNotEmpty();
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--mesh|5xx4|--mesh '5xx4' is malformed",
      "--mesh|0x4|every size must be positive",
      "--alpha|1,abc|'abc' is not a number",
      "--beta|1|has 2 axes but --alpha has 2 and --beta has 1",
      "--memory|lots|--memory 'lots' is not a size",
      "--model|gpt9|unknown model preset 'gpt9'",
      "--batch|-3|--batch must be positive"})
  void badInputIsOneLineAndExitTwo(String flag, String value, String message) {
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("shard", "--model",
        "alpa-mlp", "--mesh", "2x2", "--alpha", "1,1", "--beta", "1,1", "--memory", "1GiB"));
    int at = args.indexOf(flag);
    if (at >= 0) {
      args.set(at + 1, value);
    } else {
      args.add(flag);
      args.add(value);
    }
    CliRun r = run(args.toArray(new String[0]));
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains(message).doesNotContain("Exception").doesNotContain("\tat ");
    assertThat(r.err().strip().lines().count()).isLessThanOrEqualTo(2);
  }

  @Test
  void memoryNothingFitsInIsExitThreeWithTheNeed() {
    // Four 128x128 fp32 weights (64 KiB each) and activations cannot fit in 1 KiB per device.
    CliRun r = run("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--memory", "1KiB");
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err()).contains("no sharding fits in").contains("need at least")
        .doesNotContain("Exception");
  }

  /**
   * shard builds no multi-token prediction module (it refuses the models that have one), so its
   * help lists none of the prediction flags plan and simulate take, and giving one is an unknown
   * option: one line, exit 2.
   */
  @Test
  void thePredictionFlagsAreNotShards() {
    assertThat(run("shard", "--help").out()).doesNotContain("--mtp-");
    assertThat(run("plan", "--help").out()).contains("--mtp-num-layers");
    run("shard", "--model", "llama2-7b", "--layers", "1", "--mesh", "1x2", "--mtp-num-layers",
        "1").refusedInOneLine(2, "Unknown options: '--mtp-num-layers'");
  }

  /**
   * --memory past 1 PiB is refused in one line: 1e309 bytes overflowed a double to an internal
   * error (exit 1), and 1e23 bytes ran; PiB itself is a unit --memory reads.
   */
  @Test
  void memoryPastAPebibyteIsRefused() {
    for (String m : new String[] {"1" + "0".repeat(309) + "B", "99999999999999999999999B",
        "2PiB"}) {
      CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--memory", m)
          .refusedInOneLine(2, "is more than 1 PiB, beyond any device's memory");
    }
    assertThat(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--memory", "1PiB")
        .code()).isZero();
  }
}

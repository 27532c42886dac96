package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code meshplan shard --hlo}: the sharded module written back, kept shardings, bad files. */
class ShardHloCliTest {
  @TempDir Path dir;

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  /** The {@code sharding} of every row of a {@code shard --json} plan, by instruction name. */
  private static java.util.Map<String, String> shardingsByName(String json) throws Exception {
    java.util.Map<String, String> byName = new java.util.HashMap<>();
    for (var ins : new com.fasterxml.jackson.databind.ObjectMapper().readTree(json)
        .get("instructions")) {
      byName.put(ins.get("name").asText(), ins.get("sharding").asText());
    }
    return byName;
  }

  private Path corpus(String name) throws Exception {
    Path p = dir.resolve(name);
    try (var in = getClass().getResourceAsStream("/hlo/" + name)) {
      Files.write(p, in.readAllBytes());
    }
    return p;
  }

  @Test
  void writesTheModuleBackWithAShardingOnEveryInstruction() throws Exception {
    Path in = corpus("mlp_train_step.hlo");
    Path out = dir.resolve("sharded.hlo");
    String before = Files.readString(in);
    CliRun r = run("shard", "--hlo", in.toString(), "--mesh", "2x2", "--alpha", "1,1", "--beta",
        "1,0.01", "--out", out.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(0);
    assertThat(Files.readString(in)).isEqualTo(before);
    String text = Files.readString(out);
    long entryLines = text.lines().dropWhile(l -> !l.startsWith("ENTRY"))
        .filter(l -> l.contains(" = ")).count();
    long sharded = text.lines().dropWhile(l -> !l.startsWith("ENTRY"))
        .filter(l -> l.contains(" = ") && l.contains("sharding={")).count();
    assertThat(sharded).isEqualTo(entryLines).isGreaterThan(40);
    // The written module parses back and plans again.
    CliRun again = run("shard", "--hlo", out.toString(), "--mesh", "2x2", "--json");
    assertThat(again.code()).isEqualTo(0);
  }

  @Test
  void keptShardingsAreHonoured() throws Exception {
    // custom_calls.hlo pins x (bf16[8,1024]) to {devices=[4,1]0,1,2,3}.
    Path in = corpus("custom_calls.hlo");
    CliRun r = run("shard", "--hlo", in.toString(), "--mesh", "2x2", "--keep-shardings", "--json");
    assertThat(r.code()).as(r.err()).isEqualTo(0);
    assertThat(r.out()).contains("\"name\" : \"Arg_1.2\"");
    int at = r.out().indexOf("\"name\" : \"Arg_1.2\"");
    assertThat(r.out().substring(at, at + 400)).contains("{devices=[4,1]<=[4]}");
  }

  @Test
  void refusesToOverwriteTheInput() throws Exception {
    Path in = corpus("softmax_fused.hlo");
    CliRun r = run("shard", "--hlo", in.toString(), "--mesh", "2x2", "--out", in.toString());
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains("is also an input: --hlo");
  }

  @Test
  void aBrokenFileIsAPositionedOneLineError() throws Exception {
    Path bad = dir.resolve("bad.hlo");
    Files.writeString(bad, "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4 parameter(0)\n");
    CliRun r = run("shard", "--hlo", bad.toString(), "--mesh", "2x2");
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains("bad.hlo:4:").doesNotContain("Exception");
    assertThat(r.err().strip().lines().count()).isEqualTo(1);
  }

  @Test
  void fusionsArePlannedInsideAndTheFusionGetsItsRootSharding() throws Exception {
    Path in = corpus("softmax_fused.hlo");
    Path out = dir.resolve("softmax_sharded.hlo");
    CliRun r = run("shard", "--hlo", in.toString(), "--mesh", "2x2", "--out", out.toString(),
        "--json");
    assertThat(r.code()).as(r.err()).isEqualTo(0);
    // The rows of the plan are the inlined instructions; no fusion is planned as opaque.
    assertThat(r.out()).contains("loop_divide_fusion/divide.1").doesNotContain("planned "
        + "conservatively");
    String text = Files.readString(out);
    String fusionLine = text.lines().filter(l -> l.contains("%loop_divide_fusion = "))
        .findFirst().orElseThrow();
    String sharding = shardingsByName(r.out()).get("loop_divide_fusion/divide.1");
    assertThat(sharding).startsWith("{");
    assertThat(fusionLine).contains("sharding=" + sharding);
  }

  @Test
  void aScanLoopIsPlannedAndKeepsOneLayoutAcrossIterations() throws Exception {
    Path in = corpus("while_loop.hlo");
    Path out = dir.resolve("scan_sharded.hlo");
    CliRun r = run("shard", "--hlo", in.toString(), "--mesh", "2x2", "--out", out.toString(),
        "--json");
    assertThat(r.code()).as(r.err()).isEqualTo(0);
    var root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
    assertThat(root.get("warnings").toString()).doesNotContain("while.27");
    java.util.Map<String, String> sharding = shardingsByName(r.out());
    // The carried activation x enters as Arg_1.2 and leaves as tanh.18: one layout.
    assertThat(sharding.get("while.27/tanh.18")).isEqualTo(sharding.get("Arg_1.2"));
    // The loop is written back with a tuple sharding of its three state elements.
    String loopLine = Files.readString(out).lines().filter(l -> l.contains("%while.27 = "))
        .findFirst().orElseThrow();
    assertThat(loopLine).contains("sharding={{");
  }
}

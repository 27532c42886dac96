package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No output replaces a file that the shared model and cluster flags read: a calibration profile
 * ({@code --profile}), a cluster file ({@code --cluster}) or a {@code config.json} ({@code
 * --model}). Each command refuses with one line and exit 2, before it plans, and the input keeps
 * its bytes.
 */
class OutputNamesInputTest {
  @Test
  void noOutputReplacesAnInputOfTheSharedFlags(@TempDir Path dir) throws Exception {
    Path profile = dir.resolve("profile.yaml");
    assertThat(CliRun.of("calibrate", "examples/alpa_profile_communication_4x8_a100.txt",
        "--cluster", "4x8:a100-80gb", "--out", profile.toString()).code()).isZero();
    Path cluster = dir.resolve("cluster.yaml");
    Files.copy(Path.of("examples/cluster.yaml"), cluster);
    Path config = dir.resolve("config.json");
    Files.copy(Path.of("core/src/test/resources/hf/opt-350m.json"), config);
    String[] parallel = {"--tp", "1", "--pp", "1", "--dp", "16", "--micro-batch", "1",
        "--global-batch", "16"};
    for (Path input : List.of(profile, cluster, config)) {
      byte[] before = Files.readAllBytes(input);
      String model = input == config ? config.toString() : "opt-125m";
      String clusterArg = input == cluster ? cluster.toString() : "2x8:h100-80gb";
      List<String> shared = new ArrayList<>(List.of("--model", model, "--cluster", clusterArg));
      if (input == profile) {
        shared.addAll(List.of("--profile", profile.toString()));
      }
      List<List<String>> runs = List.of(
          join(List.of("plan", "--global-batch", "16", "--out", input.toString()), shared),
          join(List.of("plan", "--global-batch", "16", "--report", input.toString()), shared),
          join(join(List.of("simulate", "--report", input.toString()), shared),
              List.of(parallel)),
          join(join(List.of("export", "--to", "megatron", "--force", "--out", input.toString()),
              shared), List.of(parallel)));
      for (List<String> args : runs) {
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.code()).as(String.join(" ", args)).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).as(String.join(" ", args)).contains("is also an input")
            .doesNotContain("\tat ").endsWith("\n").hasLineCount(1);
        assertThat(Files.readAllBytes(input)).as(String.join(" ", args)).isEqualTo(before);
      }
    }
  }

  /**
   * A plan file whose cluster is a cluster file makes the command read that file too: no output of a command given
   * the plan may replace it, even with --force, and the refusal names the plan.
   */
  @Test
  void noOutputReplacesTheClusterFileAPlanNames(@TempDir Path dir) throws Exception {
    Path cluster = dir.resolve("c.yaml");
    String text = "nodes: 2\ngpusPerNode: 8\ngpu: a100-80gb\n";
    Files.writeString(cluster, text);
    Path plan = dir.resolve("p.json");
    assertThat(CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        cluster.toString(), "--global-batch", "16", "--out", plan.toString()).code()).isZero();
    // meshplan writes the cluster's text; a plan file may name a cluster file instead, which the
    // commands then read.
    String written = Files.readString(plan);
    assertThat(written).contains("\"cluster\" : \"2x8:a100-80gb:ib-hdr200\"");
    Files.writeString(plan, written.replace("\"cluster\" : \"2x8:a100-80gb:ib-hdr200\"",
        "\"cluster\" : \"" + cluster + "\""));
    String c = cluster.toString();
    List<String[]> runs = List.of(
        new String[] {"export", "--to", "megatron", "--plan", plan.toString(), "--out", c,
            "--force"},
        new String[] {"deploy", "--target", "slurm", "--plan", plan.toString(), "--out", c,
            "--force", "--", "train.py"},
        new String[] {"simulate", "--plan", plan.toString(), "--report", c, "--force"},
        new String[] {"plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
            "1x8:a100-80gb", "--global-batch", "8", "--compare", plan.toString(), "--report", c,
            "--force"},
        new String[] {"replan", "--plan", plan.toString(), "--lost-nodes", "1", "--out", c,
            "--force"});
    for (String[] args : runs) {
      CliRun r = CliRun.of(args);
      assertThat(r.code()).as(String.join(" ", args) + "\n" + r.err())
          .isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err()).as(String.join(" ", args)).hasLineCount(1)
          .contains("is also an input: the cluster of plan " + plan);
      assertThat(Files.readString(cluster)).as(String.join(" ", args)).isEqualTo(text);
    }
  }

  /**
   * A module plan names its HLO file, which deploy reads through it as export does: neither may
   * write over it, even with --force.
   */
  @Test
  void noLaunchFileReplacesTheModuleAPlanNames(@TempDir Path dir) throws Exception {
    Path hlo = dir.resolve("train_step.hlo");
    Files.copy(Path.of("examples/train_step.hlo"), hlo);
    byte[] before = Files.readAllBytes(hlo);
    Path plan = dir.resolve("p.json");
    CliRun p = CliRun.of("plan", "--hlo", hlo.toString(), "--microbatches", "4", "--cluster",
        "1x8:a100-80gb", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    for (String[] args : List.of(
        new String[] {"deploy", "--target", "slurm", "--plan", plan.toString(), "--out",
            hlo.toString(), "--force", "--", "train.py"},
        new String[] {"export", "--to", "alpa", "--plan", plan.toString(), "--out",
            hlo.toString(), "--force"})) {
      CliRun r = CliRun.of(args);
      assertThat(r.code()).as(String.join(" ", args) + "\n" + r.err())
          .isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err()).as(String.join(" ", args)).hasLineCount(1)
          .contains("--out " + hlo + " is also an input: the module of plan " + plan);
      assertThat(Files.readAllBytes(hlo)).isEqualTo(before);
    }
  }

  private static List<String> join(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}

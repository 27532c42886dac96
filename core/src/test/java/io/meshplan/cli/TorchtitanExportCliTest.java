package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code export --to torchtitan} on the command line: the version flag (torchtitan v0.2.2 is the
 * last release that reads a TOML job config, {@code torchtitan/config/job_config.py} at tag
 * v0.2.2; its main branch parses {@code --module}/{@code --config}, {@code
 * torchtitan/config/manager.py}), a model no llama3 flavor has, and f16 on a V100.
 */
class TorchtitanExportCliTest {
  private static final String[] LAYOUT = {"--cluster", "1x8:h100-80gb", "--tp", "2", "--pp",
      "1", "--dp", "4", "--micro-batch", "1", "--global-batch", "8", "--sequence-parallel",
      "--zero-stage", "3"};

  private static String[] with(String[] head, String... tail) {
    return java.util.stream.Stream.concat(java.util.Arrays.stream(head),
        java.util.Arrays.stream(tail)).toArray(String[]::new);
  }

  @Test
  void frameworkVersionChoosesMainsPythonConfigOrTheLastTomlRelease() {
    CliRun plain = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama3.1-8b"}, LAYOUT));
    assertThat(plain.code()).as(plain.err()).isZero();
    assertThat(plain.out()).contains("torchtitan main@b5bcd76 (2026-08-21), llama3 flavor 8B,"
        + " from its recipe llama3_8b\n", "-m torchtitan.train --module meshplan_torchtitan"
        + " --config meshplan_plan\n", "def meshplan_plan() -> Trainer.Config:\n"
        + "    config = llama3_8b()\n    config.model_spec = model_registry(\"8B\")\n");
    CliRun main = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama3.1-8b", "--framework-version", "main"}, LAYOUT));
    assertThat(main.code()).as(main.err()).isZero();
    assertThat(main.out()).isEqualTo(plain.out());
    CliRun v = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama3.1-8b", "--framework-version", "0.2.2"}, LAYOUT));
    assertThat(v.code()).as(v.err()).isZero();
    assertThat(v.out()).contains("torchtitan v0.2.2 (its last TOML release), llama3 flavor"
        + " 8B\n", "[model]\nname = 'llama3'\nflavor = '8B'\n");
    CliRun old = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama3.1-8b", "--framework-version", "0.1.0"}, LAYOUT));
    assertThat(old.code()).isEqualTo(2);
    assertThat(old.err().lines()).hasSize(1);
    assertThat(old.err()).contains("--framework-version '0.1.0' is unknown; use main, current,"
        + " b5bcd76, 0.2.2, v0.2.2 or 0.2");
    // The synonyms name the same releases.
    CliRun v2 = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama3.1-8b", "--framework-version", "v0.2.2"}, LAYOUT));
    assertThat(v2.out()).isEqualTo(v.out());
    CliRun current = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama3.1-8b", "--framework-version", "current"}, LAYOUT));
    assertThat(current.out()).isEqualTo(plain.out());
    CliRun megatron = CliRun.of(with(new String[] {"export", "--to", "megatron", "--model",
        "llama3.1-8b", "--framework-version", "0.2.2"}, LAYOUT));
    assertThat(megatron.code()).isEqualTo(2);
    assertThat(megatron.err()).contains("applies to --to torchtitan only");
  }

  @Test
  void aModelOfNoFlavorExitsThreeInOneLine() {
    CliRun r = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--model",
        "llama2-7b"}, LAYOUT));
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err().lines()).hasSize(1);
    // llama2-7b (6.7e9 parameters) is nearest the 8B flavor (8.0e9), far from 70B.
    assertThat(r.err()).contains("torchtitan has no flavor for llama2-7b",
        "the nearest is flavor 8B (layers 32, hidden 4096, heads 32, kv heads 8, ffn 14336");
    assertThat(r.out()).isEqualTo("no configuration torchtitan can express is near it\n");
    CliRun v = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--framework-version",
        "0.2.2", "--model", "llama2-7b"}, LAYOUT));
    assertThat(v.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(v.err()).contains("torchtitan has no flavor for llama2-7b");
  }

  @Test
  void f16OnAV100SuggestsNoBf16() {
    CliRun r = CliRun.of("export", "--to", "torchtitan", "--model", "llama3.1-8b", "--dtype",
        "f16", "--seq", "2048", "--cluster", "4x8:v100-32gb", "--tp", "8", "--pp", "2", "--dp",
        "2", "--micro-batch", "1", "--global-batch", "64", "--sequence-parallel",
        "--distributed-optimizer");
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).contains("the v100-32gb has no bf16");
    assertThat(r.out()).doesNotContain("bf16").contains("no configuration torchtitan can express");
  }
}

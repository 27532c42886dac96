package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Presets;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/** Library messages name the problem; the command line reads them back in its flags' words. */
class FlagWordsTest {
  @Test
  void libraryMessagesNameNoFlag() {
    ParallelConfig c = new ParallelConfig(3, 2, 4, 2, 3, 512, Recompute.NONE, false, false);
    assertThatThrownBy(() -> c.check(32, 40, 40, 40)).isInstanceOf(InputException.class)
        .hasMessage("tensor-parallel size 3 x pipeline-parallel size 2 x data-parallel size 4"
            + " = 24 GPUs, but the cluster has 32; make the product equal the cluster's GPU count")
        .message().doesNotContain("--");
    assertThatThrownBy(() -> ClusterSpec.parse("4x8:nope")).message()
        .startsWith("cluster '4x8:nope': unknown gpu 'nope'");
    assertThatThrownBy(() -> Presets.get("llama2-7b").withLayers(0)).message()
        .isEqualTo("layers must be positive, got 0");
  }

  @Test
  void theCommandLineSaysItsFlags() {
    ParallelConfig c = new ParallelConfig(3, 2, 4, 2, 3, 512, Recompute.NONE, false, false);
    assertThatThrownBy(() -> FlagWords.check(FlagWords.PARALLEL, () -> c.check(32, 40, 40, 40)))
        .hasMessage("--tp 3 x --pp 2 x --dp 4 = 24 GPUs, but the cluster has 32; make the "
            + "product equal the cluster's GPU count");
    // 24 GPUs: the batch check comes next. 512 = 3 x 4 x 42 + 8.
    assertThatThrownBy(() -> FlagWords.check(FlagWords.PARALLEL, () -> c.check(24, 40, 40, 40)))
        .hasMessage("--global-batch 512 is not a multiple of --micro-batch 3 x --dp 4 = 12");
    assertThatThrownBy(() -> FlagWords.call(FlagWords.CLUSTER,
        () -> ClusterSpec.parse("4x8:nope"))).message().startsWith("--cluster '4x8:nope'");
    assertThatThrownBy(() -> FlagWords.call(FlagWords.MODEL,
        () -> Presets.get("llama2-7b").withLayers(0).withTraining(1, DType.BF16)))
        .hasMessage("--layers must be positive, got 0");
  }

  @Test
  void onlyWholePhrasesAreReworded() {
    // "key/value heads" is one phrase; "microbatches" and "--micro-batch" are not "micro batch"
    // or "batch"; "cluster '" counts at the start only.
    assertThat(FlagWords.reword("attention heads 8 must be a multiple of key/value heads 3",
        FlagWords.MODEL)).isEqualTo("--heads 8 must be a multiple of --kv-heads 3");
    assertThat(FlagWords.reword("8 microbatches of --micro-batch 2", FlagWords.PARALLEL))
        .isEqualTo("8 microbatches of --micro-batch 2");
    assertThat(FlagWords.reword("the cluster 'x'", FlagWords.CLUSTER)).isEqualTo("the cluster 'x'");
    assertThat(FlagWords.reword("batch must be positive, got 0", FlagWords.MODEL))
        .isEqualTo("--batch must be positive, got 0");
    // A phrase the library glossed with its flag reads the flag once.
    assertThat(FlagWords.reword("needs sequence parallelism (--sequence-parallel)",
        FlagWords.PARALLEL)).isEqualTo("needs --sequence-parallel");
  }

  /** Every command that reads --cluster names the flag when the value is bad. */
  @Test
  void everyClusterFlagIsNamedOnTheCommandLine() {
    String[][] commands = {
        {"plan", "--model", "llama2-7b", "--cluster", "2x8:nope"},
        {"simulate", "--model", "llama2-7b", "--cluster", "2x8:nope", "--tp", "8", "--pp", "1",
            "--dp", "2", "--micro-batch", "1", "--global-batch", "16"},
        {"shard", "--model", "alpa-mlp", "--mesh", "2x8", "--cluster", "2x8:nope"},
        {"bench", "--cluster", "2x8:nope", "--launcher", "torchrun"},
        {"deploy", "--target", "slurm", "--cluster", "2x8:nope", "--", "train.py"}};
    for (String[] args : commands) {
      CliRun r = CliRun.of(args);
      assertThat(r.code()).as(String.join(" ", args)).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err()).as(String.join(" ", args))
          .startsWith("meshplan: error: --cluster '2x8:nope': unknown gpu 'nope'");
    }
  }

  /** The training job's refusals come back with the flags that set the job. */
  @Test
  void theJobsRefusalsNameTheirFlags() {
    CliRun r = CliRun.of("plan", "--model", "opt-125m", "--cluster", "1x4:a100-40gb",
        "--global-batch", "0");
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).isEqualTo("meshplan: error: --global-batch must be positive, got 0\n");
    assertThat(FlagWords.reword("the training precision s8 cannot train; use bf16, f16 or f32",
        FlagWords.JOB)).isEqualTo("--dtype s8 cannot train; use bf16, f16 or f32");
  }
}

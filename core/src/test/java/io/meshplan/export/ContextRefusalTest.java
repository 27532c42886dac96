package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * torchtitan and DeepSpeed have no context parallelism meshplan prices, so they refuse it, and
 * their nearest configuration runs each sequence's GPUs as data-parallel replicas. torchtitan's
 * rules, restated from main at b5bcd76 ({@code pytorch/torchtitan}): {@code
 * models/common/decoder.py:173-183} refuses context parallelism under SDPA (the llama3 recipes'
 * attention) and varlen attention; {@code distributed/parallel_dims.py:182} asserts {@code
 * dp_replicate x dp_shard x cp x tp x pp == world size}.
 */
class ContextRefusalTest {
  /** LLaMA 3 8B at 32k tokens on 16 H100s: TP 2 x CP 4 x DP 2, ZeRO-3 (torchtitan's FSDP). */
  private static final ExportInput CP = new ExportInput(
      Presets.get("llama3-8b").withSequence(32768), ClusterSpec.parse("2x8:h100-80gb"),
      new ParallelConfig(2, 1, 2, 1, 1, 16, Recompute.SELECTIVE, true, 3, 0, 0, 1, 1, 4, false));

  @Test
  void eachRefusesContextParallelismAndItsNearestFoldsItIntoDataParallelism() {
    for (FrameworkWriter w : List.of(new TorchtitanPython(), new TorchtitanToml(),
        new DeepSpeedConfig())) {
      assertThat(w.missing(CP)).as(w.getClass().getSimpleName()).hasValueSatisfying(m ->
          assertThat(m).contains("context parallelism"));
      ExportInput n = w.nearest(CP).orElseThrow();
      // 16 GPUs / (TP 2 x PP 1) = 8 replicas; the 16 sequences are 8 x 1 x 2 microbatches.
      assertThat(n.config()).isEqualTo(new ParallelConfig(2, 1, 8, 1, 1, 16,
          Recompute.SELECTIVE, true, 3));
      assertThat(w.missing(n)).isEmpty();
    }
    assertThat(new TorchtitanPython().missing(CP).orElseThrow())
        .contains("models/common/decoder.py:173-183");
  }

  @Test
  void theNearestTorchtitanFileFillsTheWorld() {
    ExportInput n = new TorchtitanPython().nearest(CP).orElseThrow();
    TorchtitanPythonFile t = TorchtitanPythonFile.parse(new TorchtitanPython().write(n));
    long product = t.integer("parallelism.data_parallel_replicate_degree")
        * t.integer("parallelism.data_parallel_shard_degree")
        * t.integer("parallelism.context_parallel_degree")
        * t.integer("parallelism.tensor_parallel_degree")
        * t.integer("parallelism.pipeline_parallel_degree");
    // parallel_dims.py:182: 1 x 8 x 1 x 2 x 1 = 16, the world.
    assertThat(product).isEqualTo(CP.cluster().gpuCount());
    assertThat(t.integer("parallelism.context_parallel_degree")).isEqualTo(1);
  }

  @Test
  void aGlobalBatchTheFoldedReplicasCannotShareHasNoNearest() {
    // 4 sequences over DP 2 x CP 4 = 8 folded replicas: not a whole microbatch each.
    ModelSpec m = CP.model();
    ExportInput four = new ExportInput(m, CP.cluster(), new ParallelConfig(2, 1, 2, 1, 1, 4,
        Recompute.SELECTIVE, true, 3, 0, 0, 1, 1, 4, false));
    for (FrameworkWriter w : List.of(new TorchtitanPython(), new TorchtitanToml(),
        new DeepSpeedConfig())) {
      assertThat(w.nearest(four)).as(w.getClass().getSimpleName()).isEmpty();
    }
  }
}

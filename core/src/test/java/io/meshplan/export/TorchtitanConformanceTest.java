package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every torchtitan TOML meshplan writes against torchtitan v0.2.2's own rules, restated here from
 * that tag of pytorch/torchtitan (the file and line of each rule in its comment):
 *
 * <ul>
 *   <li>{@code distributed/parallel_dims.py:53}: dp_replicate x dp_shard x cp x tp x pp = world;
 *   <li>{@code distributed/pipeline_parallel.py:75-108}: ceil((n_layers + first less + last less)
 *       / layers per stage) virtual stages, divisible by pp, one per rank for 1F1B and at least
 *       two for Interleaved1F1B; lines 266-343: the stages' layers;
 *   <li>{@code distributed/pipeline_parallel.py:189}: local batch divisible by the microbatch;
 *   <li>{@code train.py:202-204}: global batch a multiple of local batch x data-parallel degree;
 *   <li>{@code config/job_config.py:282, 336}: the mixed-precision and reshard literals;
 *   <li>{@code models/llama3/__init__.py:51-98}, {@code model/args.py:33}, {@code
 *       model/model.py:332-336}: the flavors' dimensions.
 * </ul>
 */
class TorchtitanConformanceTest {
  private static final TomlMapper TOML = new TomlMapper();

  @Test
  void theFlavorsHaveTheDimensionsOfTheLlama3Presets() {
    // FeedForward: int(int(2 * 4 * dim / 3) * multiplier) rounded up to multiple_of.
    assertThat(TorchtitanV022.FLAVORS.stream().map(TorchtitanV022.Flavor::ffn))
        .containsExactly(14336, 28672, 53248);
    assertThat(TorchtitanV022.flavor(Presets.get("llama3-8b")).orElseThrow().name())
        .isEqualTo("8B");
    assertThat(TorchtitanV022.flavor(Presets.get("llama3-70b")).orElseThrow().name())
        .isEqualTo("70B");
    assertThat(TorchtitanV022.flavor(Presets.get("llama3.1-405b")).orElseThrow().name())
        .isEqualTo("405B");
    // LLaMA2-70B differs from 70B only in its vocabulary (32,000, not args.py:33's 128,256).
    assertThat(TorchtitanV022.flavor(Presets.get("llama2-70b"))).isEmpty();
    ModelSpec m = Plans.LLAMA70B;
    ModelSpec fewer = new ModelSpec(m.name(), m.family(), 40, m.hidden(), m.heads(), m.kvHeads(),
        m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype());
    assertThat(TorchtitanV022.flavor(fewer)).isEmpty();
  }

  @Test
  void theDefaultLessLayersMadeFiveStagesOfTwentyOnFourRanks() {
    // The export before this rule: 80 layers, 20 per stage, less-layers left at their default 1:
    // ceil(82 / 20) = 5 stages, not divisible by pp 4 (pipeline_parallel.py:85).
    int stages = TorchtitanV022.virtualStages(80, 20, 1, 1);
    assertThat(stages).isEqualTo(5);
    assertThat(TorchtitanV022.stageError(stages, 4, true)).get().asString()
        .startsWith("Number of virtual stages (5) must be divisible");
    // With both 0: 4 stages of 20 layers, one per rank.
    assertThat(TorchtitanV022.virtualStages(80, 20, 0, 0)).isEqualTo(4);
    assertThat(TorchtitanV022.stageError(4, 4, true)).isEmpty();
    assertThat(TorchtitanV022.layersOfStages(4, 80, 0, 0)).contains(List.of(20, 20, 20, 20));
    // generate_llm_fqn_per_model_part with weights 1: 82 effective layers over 4 stages.
    assertThat(TorchtitanV022.layersOfStages(4, 80, 1, 1)).contains(List.of(20, 21, 20, 19));
    // Interleaved: 2 stages per rank at least (pipeline_parallel.py:104).
    assertThat(TorchtitanV022.stageError(4, 4, false)).isPresent();
  }

  @Test
  void everyExportedTomlPassesTheRulesOfV022() throws Exception {
    List<ExportInput> inputs = Plans.torchtitanInputs();
    assertThat(inputs).hasSizeGreaterThan(6);
    for (ExportInput in : inputs) {
      ExportResult r = new Exporter().export(ExportTarget.TORCHTITAN_V022, in);
      assertThat(r).as(in.config().toString()).isInstanceOf(ExportResult.Exported.class);
      conforms(in, TOML.readTree(((ExportResult.Exported) r).text()));
    }
  }

  /** One TOML against v0.2.2's checks, and against the configuration it was written from. */
  private static void conforms(ExportInput in, JsonNode t) {
    JsonNode p = t.path("parallelism");
    int pp = p.path("pipeline_parallel_degree").asInt();
    int dpShard = p.path("data_parallel_shard_degree").asInt();
    int dpReplicate = p.path("data_parallel_replicate_degree").asInt();
    // parallel_dims.py:53.
    assertThat(dpReplicate * dpShard * p.path("context_parallel_degree").asInt()
        * p.path("tensor_parallel_degree").asInt() * pp).isEqualTo(in.cluster().gpuCount());
    assertThat(Set.of("default", "always", "never"))
        .contains(p.path("fsdp_reshard_after_forward").asText("default"));
    JsonNode tr = t.path("training");
    // train.py:202-204.
    assertThat(tr.path("global_batch_size").asInt()
        % (tr.path("local_batch_size").asInt() * dpReplicate * dpShard)).isZero();
    assertThat(Set.of("bfloat16", "float32")).contains(tr.path("mixed_precision_param").asText());
    assertThat(t.at("/model/flavor").asText())
        .isEqualTo(TorchtitanV022.flavor(in.model()).orElseThrow().name());
    if (pp > 1) {
      stagesConform(in, p, tr.path("local_batch_size").asInt());
    }
  }

  /** pipeline_parallel.py's stage count, per-rank rule and split for the written table. */
  private static void stagesConform(ExportInput in, JsonNode p, int localBatch) {
    ParallelConfig c = in.config();
    int pp = c.pipelineParallel();
    if (p.has("module_fqns_per_model_part")) {
      // Uneven stages: one part per chunk, pp x vpp of them (pipeline_parallel.py:457-458), with
      // the chunks' layers in order.
      JsonNode parts = p.path("module_fqns_per_model_part");
      assertThat(parts.size()).isEqualTo(pp * c.virtualStages());
      int[] chunks = c.chunkLayers(in.model().layers());
      for (int k = 0; k < parts.size(); k++) {
        int extra = (k == 0 ? 1 : 0) + (k == parts.size() - 1 ? 2 : 0);
        assertThat(parts.get(k).size()).isEqualTo(chunks[k] + extra);
      }
      return;
    }
    int per = p.path("pipeline_parallel_layers_per_stage").asInt();
    // The defaults are 1 (job_config.py:377, 383) when the table leaves them out.
    int first = p.path("pipeline_parallel_first_stage_less_layers").asInt(1);
    int last = p.path("pipeline_parallel_last_stage_less_layers").asInt(1);
    int stages = TorchtitanV022.virtualStages(in.model().layers(), per, first, last);
    boolean single = !p.path("pipeline_parallel_schedule").asText().startsWith("Interleaved");
    assertThat(TorchtitanV022.stageError(stages, pp, single)).as(c.toString()).isEmpty();
    assertThat(stages).isEqualTo(pp * c.virtualStages());
    // The split torchtitan builds is the simulated one: every stage L / (pp x vpp) layers.
    assertThat(TorchtitanV022.layersOfStages(stages, in.model().layers(), first, last))
        .contains(Collections.nCopies(stages, in.model().layers() / stages));
    // pipeline_parallel.py:189.
    assertThat(localBatch % p.path("pipeline_parallel_microbatch_size").asInt()).isZero();
  }

  @Test
  void f16OnGpusWithoutBf16HasNoTorchtitanFormAndNoBf16Nearest() {
    ModelSpec m = Presets.get("llama3.1-8b");
    ModelSpec f16 = new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffn(), m.vocab(), 2048, 1, DType.F16, m.arch());
    ParallelConfig c = new ParallelConfig(8, 2, 2, 1, 1, 64, Recompute.NONE, true, 1);
    ExportResult v100 = new Exporter().export(ExportTarget.TORCHTITAN_V022,
        new ExportInput(f16, ClusterSpec.parse("4x8:v100-32gb"), c));
    assertThat(v100).isInstanceOf(ExportResult.NotExpressible.class);
    ExportResult.NotExpressible n = (ExportResult.NotExpressible) v100;
    assertThat(n.missing()).contains("has no bf16", "job_config.py:282");
    assertThat(n.nearest()).isEmpty();
    // An A100 has bf16: there the nearest is the bf16 plan.
    ExportResult a100 = new Exporter().export(ExportTarget.TORCHTITAN_V022,
        new ExportInput(f16, ClusterSpec.parse("4x8:a100-80gb"), c));
    assertThat(((ExportResult.NotExpressible) a100).nearest().orElseThrow().model().dtype())
        .isEqualTo(DType.BF16);
  }
}

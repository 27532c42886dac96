package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import java.util.ArrayList;
import java.util.List;

/**
 * LLaMA3-70B (bf16, 4096 tokens) on 128x8:h100-80gb:ib-ndr400, as configurations and plans: the
 * dimensions of torchtitan's llama3 flavor 70B, so that every framework can state the model; its
 * RoPE is Llama 3's, unscaled, which Megatron-LM and Megatron-DeepSpeed build. torchtitan's
 * flavors scale RoPE as Llama 3.1 does ({@link #LLAMA31_70B}), which v0.2.2's TOML cannot undo.
 */
final class Plans {
  static final ClusterSpec CLUSTER = ClusterSpec.parse("128x8:h100-80gb:ib-ndr400");
  static final ModelSpec LLAMA70B = new ModelSpec("llama3-70b", ModelSpec.Family.LLAMA, 80, 8192,
      64, 8, 28672, 128256, 4096, 1, DType.BF16,
      io.meshplan.model.Presets.get("llama3-70b").arch());

  /** The same model with Llama 3.1's RoPE scaling: torchtitan's llama3 flavor 70B exactly. */
  static final ModelSpec LLAMA31_70B = new ModelSpec("llama3.1-70b", ModelSpec.Family.LLAMA, 80,
      8192, 64, 8, 28672, 128256, 4096, 1, DType.BF16,
      io.meshplan.model.Presets.get("llama3.1-70b").arch());

  private Plans() {}

  /**
   * The same input for torchtitan: its model with Llama 3.1's RoPE scaling, which torchtitan's
   * llama3 flavors build ({@link #LLAMA31_70B} for {@link #LLAMA70B}).
   *
   * @param in an input of a Llama 3 model
   * @return the input of its Llama 3.1 twin
   */
  static ExportInput titan(ExportInput in) {
    ModelSpec m = in.model();
    ModelSpec t = new ModelSpec(m.name().replace("llama3-", "llama3.1-"), m.family(), m.layers(),
        m.hidden(), m.heads(), m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype(),
        m.arch().withNumerics(io.meshplan.model.Presets.get("llama3.1-70b").arch().numerics()));
    return new ExportInput(t, in.cluster(), in.config(), in.attention(), in.overlaps(),
        in.gpipe());
  }

  /** tp 8 x pp 4 x dp 32 = 1024 GPUs; 1024 / (1 x 32) = 32 microbatches per pipeline. */
  static ParallelConfig config(int vpp, Recompute r, boolean sp, boolean distOpt) {
    return new ParallelConfig(8, 4, 32, vpp, 1, 1024, r, sp, distOpt);
  }

  static ExportInput input(int vpp, Recompute r, boolean sp, boolean distOpt) {
    return new ExportInput(LLAMA70B, CLUSTER, config(vpp, r, sp, distOpt));
  }

  /** The same tp 8 x pp 4 x dp 32 layout with a ZeRO stage. */
  static ExportInput input(int vpp, Recompute r, boolean sp, int zeroStage) {
    return new ExportInput(LLAMA70B, CLUSTER, config(vpp, r, sp, false).withZeroStage(zeroStage));
  }

  /**
   * A plan from stages given as {first layer, last layer, submesh nodes, logical dp, logical tp}
   * (8 GPUs per node, so dp * tp = nodes * 8).
   */
  static PipelinePlan plan(int[][] stages) {
    int[] zero = new int[stages.length];
    java.util.Arrays.fill(zero, 1);
    return plan(stages, zero);
  }

  /** A plan as {@link #plan(int[][])} of {@link #LLAMA31_70B}, which torchtitan builds. */
  static PipelinePlan titanPlan(int[][] stages) {
    int[] zero = new int[stages.length];
    java.util.Arrays.fill(zero, 1);
    return plan(LLAMA31_70B, stages, zero);
  }

  /** A plan as {@link #plan(int[][])} whose stages use the given ZeRO stages. */
  static PipelinePlan plan(int[][] stages, int[] zeroStages) {
    return plan(LLAMA70B, stages, zeroStages);
  }

  /** A plan of a model as {@link #plan(int[][])} whose stages use the given ZeRO stages. */
  static PipelinePlan plan(ModelSpec model, int[][] stages, int[] zeroStages) {
    List<StagePlan> list = new ArrayList<>();
    int device = 0;
    for (int i = 0; i < stages.length; i++) {
      int[] s = stages[i];
      list.add(new StagePlan(s[0], s[1], s[2], 8, device, s[3], s[4], Recompute.FULL, true,
          zeroStages[i], true, 0.1, 0.2, 1e9, List.of()));
      device += s[2] * 8;
    }
    // A microbatch gives each replica of the widest data-parallel stage one sequence (32
    // sequences when every stage is 32-way data parallel, in 32 microbatches).
    int g = 1;
    for (int[] s : stages) {
      g = Math.max(g, s[3]);
    }
    // An H100 plan, priced with fused attention as the planner prices it there.
    return new PipelinePlan(new io.meshplan.plan.PlanSource.Preset(model,
        io.meshplan.model.Attention.FLASH), CLUSTER.toShortString(), 1024, g, 1024 / g, 1, list,
        new PipelinePlan.Prediction(10, 1000, 100, 0.3, 5e10));
  }

  /**
   * The configurations both torchtitan conformance tests export: LLaMA-2 70B on 128 H100s at
   * every pipeline size and chunk count that splits its layers evenly, the uneven 18-layer first
   * and last stages with and without chunks, and Llama 3.1 8B on one A100 node.
   *
   * @return the inputs, a new list
   */
  static List<ExportInput> torchtitanInputs() {
    List<ExportInput> inputs = new ArrayList<>();
    ClusterSpec c = ClusterSpec.parse("16x8:h100-80gb");
    ModelSpec m = LLAMA31_70B;
    for (int pp : new int[] {1, 2, 4, 5, 8, 16}) {
      for (int vpp : pp == 1 ? new int[] {1} : new int[] {1, 2, 5}) {
        if (m.layers() % (pp * vpp) != 0 || 128 % (8 * pp) != 0) {
          continue;
        }
        inputs.add(new ExportInput(m, c, new ParallelConfig(8, pp, 128 / (8 * pp), vpp, 1, 256,
            Recompute.FULL, true, pp > 1 ? 1 : 3)));
      }
    }
    inputs.add(new ExportInput(m, c, new ParallelConfig(8, 4, 4, 1, 1, 256, Recompute.FULL,
        true, 1).withStageLayers(18, 18)));
    inputs.add(new ExportInput(m, c, new ParallelConfig(8, 4, 4, 2, 1, 256, Recompute.FULL,
        true, 1).withStageLayers(18, 18)));
    inputs.add(new ExportInput(io.meshplan.model.Presets.get("llama3.1-8b"),
        ClusterSpec.parse("1x8:a100-80gb"),
        new ParallelConfig(1, 1, 8, 1, 2, 64, Recompute.SELECTIVE, false, 0)));
    return inputs;
  }
}

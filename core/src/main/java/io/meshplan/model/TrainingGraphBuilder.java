package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Builds the training step of a decoder-only transformer, or a part of it (a range of blocks, with
 * or without embedding and head), as one graph: forward pass ({@link DecoderForward}), backward
 * pass by reverse-mode differentiation with one rule per opcode ({@link Backprop}, {@link
 * VjpRules}), activation recomputation ({@link Recompute}), fp32 gradient accumulation and the
 * Adam update (Kingma and Ba 2015; decoupled weight decay, Loshchilov and Hutter 2019) on fp32
 * master weights and moments, as in mixed-precision training (Micikevicius et al. 2018), or with
 * bf16 optimizer state on the bf16 weights themselves ({@link OptimizerState}).
 *
 * <p>Every trained weight has separate parameters for its compute copy, fp32 master, Adam m and v
 * and fp32 gradient accumulator, each aliased to its update, so the intra-op ILP chooses each one's
 * layout: sharding master, moments and accumulator over the data-parallel axis is ZeRO stage 1-2,
 * sharding the weight too is ZeRO-3/FSDP (Rajbhandari et al. SC'20). The fp32 gradient and the new
 * compute-type weight pass through an identity {@code broadcast} each: that gives them a layout
 * decision of their own in the ILP (elementwise ops share their operand's), so the gradient may be
 * reduced replicated and then kept sharded, and the updated weight gathered from a sharded master,
 * each at its resharding price.
 *
 * <p>Phases and layers are recorded per instruction; scopes are {@code <layer>/<phase>/<part>}
 * with blocks named {@code layer_<i>}, so {@link io.meshplan.graph.LayerScopes} finds the blocks.
 */
public final class TrainingGraphBuilder {
  /**
   * Adam's first-moment decay rate (dimensionless), as meshplan prices the update; exports write
   * the same value (values only set constants, so they do not change the price).
   */
  public static final double BETA1 = 0.9;
  /** Adam's second-moment decay rate (dimensionless). */
  public static final double BETA2 = 0.95;
  /** Adam's epsilon (dimensionless). */
  public static final double ADAM_EPS = 1e-8;
  /** The learning rate of the priced update; exports leave the learning rate to the user. */
  private static final double LR = 1e-4;
  /** Decoupled weight decay (AdamW, Loshchilov and Hutter 2019; dimensionless). */
  public static final double WEIGHT_DECAY = 0.1;

  private TrainingGraphBuilder() {}

  /**
   * Builds a training graph.
   *
   * @param spec the model (a LLaMA- or GPT-family decoder)
   * @param options what to build
   * @return the graph with its phases, layers, roles and weights
   * @throws IllegalArgumentException when the block range is outside the model, the family is
   *     not a decoder, or the sequence exceeds a learned position table
   */
  public static TrainingGraph build(ModelSpec spec, TrainingOptions options) {
    if (spec.family() == ModelSpec.Family.ALPA_MLP) {
      throw new IllegalArgumentException(spec.name() + " is not a transformer decoder");
    }
    if (options.firstBlock() + (long) options.blockCount() > spec.layers()) {
      throw new IllegalArgumentException("blocks " + options.firstBlock() + ".."
          + (options.firstBlock() + options.blockCount() - 1) + " are outside the "
          + spec.layers() + " blocks of " + spec.name());
    }
    return new Run(spec, options, false).build();
  }

  /**
   * The prefix of the names of the LM head's weights in a graph with a head, which a multi-token
   * prediction module shares with the model's head.
   *
   * @return the prefix
   */
  public static String lmHeadWeights() {
    return LayerRef.head().scope() + "/" + DecoderForward.LM_HEAD_PART + "/";
  }

  /**
   * The prefix of the names of a multi-token prediction module's token table in {@link
   * #buildMtp}'s graph, the embedding's own where one stage holds both.
   *
   * @param spec the model
   * @return the prefix
   */
  public static String mtpTableWeights(ModelSpec spec) {
    return LayerRef.block(spec.layers()).scope() + "/" + DecoderForward.MTP_TABLE_PART + "/";
  }

  /**
   * Builds the training graph of the input of one multi-token prediction module (DeepSeek-V3,
   * arXiv:2412.19437, section 2.2; Megatron-Core's {@code MultiTokenPredictionLayer}): the last
   * block's output (an {@link ParamRole#INPUT_ACTIVATION} parameter) and the embedding of the
   * tokens one further ahead, each normed, concatenated and projected {@code 2h -> h}; the output
   * gradient of the projection is an {@link ParamRole#OUTPUT_GRADIENT} parameter. The rest of the
   * module is a transformer block like the model's expert blocks and the final norm, LM head and
   * loss like its head's, with the LM head shared; they are priced as such. Megatron-Core runs the
   * module on the last pipeline stage, which holds a copy of the embedding table for it.
   *
   * @param spec the model, with multi-token prediction
   * @param options the backward, optimizer, precision and workload of the step; its block range,
   *     embedding and head are ignored
   * @return the graph
   */
  public static TrainingGraph buildMtp(ModelSpec spec, TrainingOptions options) {
    Require.that(spec.arch().mtpDepth() > 0, () -> spec.name() + " has no multi-token prediction");
    return new Run(spec, options.withBlocks(0, 0).withEmbedding(false).withHead(true), true)
        .build();
  }

  /** One build. */
  private static final class Run {
    private final ModelSpec spec;
    private final TrainingOptions o;
    private final Tape t;
    private final DecoderForward fwd;
    private final boolean mtp;
    private final List<WeightTensors> weights = new ArrayList<>();
    private final List<Integer> outputs = new ArrayList<>();
    private int input = -1;
    private int inputGradient = -1;

    Run(ModelSpec spec, TrainingOptions o, boolean mtp) {
      this.spec = spec;
      this.o = o;
      this.mtp = mtp;
      this.t = new Tape(spec.name() + (o.backward() ? "_train" : "_forward"));
      this.fwd = new DecoderForward(t, spec, o);
    }

    TrainingGraph build() {
      int[] bsh = {o.microbatch(), o.seq(), spec.hidden()};
      DType dt = o.storageDtype();
      int x;
      if (o.embedding()) {
        t.at(Phase.FORWARD, LayerRef.embedding(), "input");
        input = t.param(TensorShape.of(DType.S32, o.microbatch(), o.seq()), ParamRole.TOKENS);
        x = fwd.embedding(input);
      } else {
        LayerRef first = o.blockCount() > 0 ? LayerRef.block(o.firstBlock()) : LayerRef.head();
        t.at(Phase.FORWARD, first, "input");
        input = t.param(TensorShape.of(dt, bsh), ParamRole.INPUT_ACTIVATION);
        x = input;
      }
      fwd.keepInput(x);
      for (int i = o.firstBlock(); i < o.firstBlock() + o.blockCount(); i++) {
        int start = t.size();
        t.at(Phase.FORWARD, LayerRef.block(i), "");
        x = fwd.keepInput(fwd.block(x));
        checkpoint(start);
      }
      if (mtp) {
        x = mtpModule(bsh, dt);
      }
      int output = x;
      if (o.head() && !mtp) {
        t.at(Phase.FORWARD, LayerRef.head(), "");
        output = fwd.head(x);
      }
      outputs.add(output);
      int outputGradient = -1;
      if (o.backward()) {
        outputGradient = backward(output, bsh, dt);
      }
      int[] outs = outputs.stream().mapToInt(Integer::intValue).toArray();
      if (outs.length > 1) {
        t.at(Phase.OPTIMIZER, t.layer(), "outputs");
        t.tuple(outs);
      }
      weights.sort(java.util.Comparator.comparingInt(WeightTensors::weight));
      return new TrainingGraph(spec, o, t.b.build(), t.phases(), t.layers(), t.roles(), weights,
          input, output, outputGradient, o.embedding() ? -1 : inputGradient, t.fp8Stored());
    }

    /** The module's input activation, input projection and block; returns the block's output. */
    private int mtpModule(int[] bsh, DType dt) {
      LayerRef module = LayerRef.block(spec.layers());
      t.at(Phase.FORWARD, module, "input");
      input = t.param(TensorShape.of(dt, bsh), ParamRole.INPUT_ACTIVATION);
      fwd.keepInput(input);
      t.at(Phase.FORWARD, module, "");
      int start = t.size();
      int x = fwd.mtpInput(input);
      checkpoint(start);
      return x;
    }

    /**
     * Makes the block built from {@code start} on a checkpoint when the mode asks for one: full
     * recomputation runs it all again, torchtitan's per-op mode replays it reusing what it saved.
     * MaxText's policies ({@link MaxTextRemat}) make no region: as under JAX's rematerialization,
     * the backward recomputes each value it reads and nothing else.
     */
    private void checkpoint(int start) {
      if (o.recompute() == Recompute.FULL) {
        t.recomputeRegion(start, t.size());
      } else if (o.recompute() == Recompute.OP) {
        t.replayRegion(start, t.size());
      }
    }

    private int backward(int output, int[] bsh, DType dt) {
      int forwardEnd = t.size();
      Set<Integer> differentiable = new HashSet<>(fwd.trainedWeights());
      if (!o.embedding()) {
        differentiable.add(input);
      }
      Backprop bp = new Backprop(t, forwardEnd, differentiable);
      int outputGradient = -1;
      if (o.head() && !mtp) {
        t.at(Phase.BACKWARD, LayerRef.head(), "loss");
        bp.seed(output, t.constant(dt, 1.0));
      } else {
        t.at(Phase.BACKWARD, t.layerOf(output), "output_gradient");
        outputGradient = t.param(TensorShape.of(dt, bsh), ParamRole.OUTPUT_GRADIENT);
        bp.seed(output, outputGradient);
      }
      Map<Integer, String> names = fwd.weightNames();
      bp.run((parameter, gradient) -> {
        if (parameter == input) {
          inputGradient = gradient;
          outputs.add(gradient);
        } else {
          update(names.get(parameter), parameter, gradient);
        }
      });
      // Frozen weights (LoRA's base): held, read by the forward and backward passes, and neither
      // differentiated nor updated.
      for (Map.Entry<Integer, String> e : names.entrySet()) {
        if (!differentiable.contains(e.getKey())) {
          weights.add(new WeightTensors(e.getValue(), t.layerOf(e.getKey()), e.getKey(), -1, -1,
              -1, -1, -1, -1, -1, -1, -1, -1, -1));
        }
      }
      return outputGradient;
    }

    /**
     * Accumulates a weight's gradient in fp32 and, with the optimizer, applies Adam; under bf16
     * optimizer state ({@link OptimizerState#BF16}) the gradient is accumulated in bf16 and Adam
     * updates the bf16 weight itself with bf16 moments.
     */
    private void update(String name, int w, int g) {
      LayerRef layer = t.layerOf(w);
      String shortName = name.substring(name.indexOf('/') + 1);
      t.at(Phase.OPTIMIZER, layer, "optimizer/" + shortName);
      boolean own = spec.optimizerState() == OptimizerState.BF16;
      Require.that(!own || o.storageDtype() == DType.BF16, () -> "bf16 optimizer state needs bf16 "
          + "weights");
      TensorShape kept = t.shape(w).withDtype(own ? DType.BF16 : DType.F32);
      // The weight is the optimizer's own: in fp32 training, or bf16 under bf16 state.
      boolean fp32 = own || o.storageDtype() == DType.F32;
      int g32 = layoutBoundary(fp32 ? g : t.convert(g, DType.F32));
      int acc = t.param(kept, ParamRole.GRADIENT_ACCUMULATOR);
      int acc2 = t.add(acc, g32);
      alias(acc, acc2);
      if (!o.optimizer()) {
        weights.add(new WeightTensors(name, layer, w, g, g32, acc, acc2, -1, -1, -1, -1, -1, -1,
            -1));
        return;
      }
      int master = fp32 ? w : t.param(kept, ParamRole.MASTER_WEIGHT);
      int m = t.param(kept, ParamRole.ADAM_M);
      int v = t.param(kept, ParamRole.ADAM_V);
      int m2 = t.add(t.mul(m, t.fill(kept, BETA1)), t.mul(acc2, t.fill(kept, 1 - BETA1)));
      int v2 = t.add(t.mul(v, t.fill(kept, BETA2)),
          t.mul(t.mul(acc2, acc2), t.fill(kept, 1 - BETA2)));
      // Kingma and Ba's efficient form: the bias corrections fold into the step size
      // lr * sqrt(1 - beta2^k) / (1 - beta1^k), a scalar per step k; the constant holds step 1's.
      double stepSize = LR * Math.sqrt(1 - BETA2) / (1 - BETA1);
      int ratio = t.binary(Opcode.DIVIDE, m2,
          t.add(t.unary(Opcode.SQRT, v2), t.fill(kept, ADAM_EPS)));
      int decayed = t.mul(master, t.fill(kept, 1 - LR * WEIGHT_DECAY));
      int master2 = t.binary(Opcode.SUBTRACT, decayed, t.mul(ratio, t.fill(kept, stepSize)));
      alias(master, master2);
      alias(m, m2);
      alias(v, v2);
      int w2 = master2;
      if (!fp32) {
        // The weight's own type: the storage type, or FP8 for weights kept so (Lora#fp8Weights),
        // cast from the fp32 master once a step as Megatron-LM's distributed optimizer does.
        w2 = layoutBoundary(t.convert(master2, t.shape(w).dtype()));
        alias(w, w2);
      }
      weights.add(new WeightTensors(name, layer, w, g, g32, acc, acc2, fp32 ? -1 : master, m, v,
          fp32 ? -1 : master2, m2, v2, w2));
    }

    private void alias(int parameter, int update) {
      t.alias(parameter, update);
      outputs.add(update);
    }

    /** An identity broadcast: a value with a layout decision of its own in the intra-op ILP. */
    private int layoutBoundary(int x) {
      int rank = t.shape(x).rank();
      int[] dims = new int[rank];
      for (int i = 0; i < rank; i++) {
        dims[i] = i;
      }
      return t.broadcast(x, t.shape(x).dims(), dims);
    }
  }
}

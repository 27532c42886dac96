package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.util.Require;
import io.meshplan.util.ShellQuote;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The Python text of an Alpa training program ({@link AlpaPipeshard}): a header that says what
 * runs where and how to start it, the plan's constants (model sizes, batch, and the four lists of
 * {@code alpa.ManualStageOption}, written as literals), a JAX/Flax decoder with one marked
 * pipeline layer per transformer block, and the training loop.
 *
 * <p>The model: token embedding (and a learned position table for GPT-style models), blocks of
 * pre-norm attention and MLP (RMSNorm or LayerNorm in fp32, rotary positions with the model's
 * base ({@code Numerics.ropeTheta}), grouped key/value heads repeated over their queries, a causal softmax in
 * fp32, SwiGLU, GeLU or ReLU), a final norm and the LM head (the token table when tied); the loss
 * on fp32 logits, as Alpa's GPT benchmark computes it ({@code
 * benchmark/alpa/benchmark_one_case_gpt_bert.py}). Adam (optax) with an fp32 master copy of 16-bit
 * weights: Alpa's own {@code TrainState} ({@code alpa/model/model_util.py}, {@code
 * use_master_copy}) for fp16, which casts the updated weights to fp16, and the same scheme written
 * out for bf16, with the learning rate {@code LR} (default 3e-4, LLaMA 2's peak rate for its 7B
 * and 13B models, Touvron et al. 2023, Table 1). The state is created on the cluster by {@code
 * alpa.CreateStateParallel} ({@code tests/runtime/test_create_state.py}), so no process holds the
 * whole model.
 *
 * <p>A stage that recomputes everything wraps its blocks in {@code flax.linen.remat} ({@code
 * jax.checkpoint}, what {@code ManualLayerOption(remat_layer=True)} applies to every layer); a
 * selective one wraps only the attention core (scores, softmax and their product with the values,
 * meshplan's selective mode).
 */
final class AlpaProgram {
  private final ModelSpec model;
  private final ClusterSpec cluster;
  private final List<AlpaStages.Stage> stages;
  private final int globalBatch;
  private final int microbatches;
  private final boolean gpipe;
  private final String what;
  private final Optional<PipelinePlan.Prediction> prediction;

  /**
   * Describes the program.
   *
   * @param model the model in its training precision
   * @param cluster the cluster
   * @param stages the stages, which {@link AlpaStages#check} accepts
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration
   * @param gpipe whether the pipeline runs GPipe rather than 1F1B
   * @param what what the stages come from, for the header
   * @param prediction meshplan's figures for the plan, when it has them
   */
  AlpaProgram(ModelSpec model, ClusterSpec cluster, List<AlpaStages.Stage> stages,
      int globalBatch, int microbatches, boolean gpipe, String what,
      Optional<PipelinePlan.Prediction> prediction) {
    this.model = Require.nonNull(model, "model");
    this.cluster = Require.nonNull(cluster, "cluster");
    this.stages = List.copyOf(stages);
    this.globalBatch = globalBatch;
    this.microbatches = microbatches;
    this.gpipe = gpipe;
    this.what = Require.nonNull(what, "what");
    this.prediction = Require.nonNull(prediction, "prediction");
  }

  /**
   * The program.
   *
   * @return the Python file's content, ending in a newline
   */
  String text() {
    StringBuilder sb = new StringBuilder();
    header(sb);
    sb.append(IMPORTS);
    constants(sb);
    sb.append(MODEL);
    sb.append(TRAINING);
    return sb.toString();
  }

  private void header(StringBuilder sb) {
    String name = ShellQuote.commentText(model.name());
    sb.append("# Alpa training program written by meshplan: ").append(what).append(" of ")
        .append(name).append(" on ").append(cluster.toShortString()).append(", ")
        .append(cluster.gpuCount()).append(" GPUs.\n");
    sb.append("# Alpa at ").append(AlpaPipeshard.COMMIT).append(" (alpa-projects/alpa) runs it"
        + " as planned: alpa.PipeshardParallel with a\n"
        + "# ManualStageOption (alpa/pipeline_parallel/stage_construction.py) giving each stage"
        + " its blocks,\n"
        + "# its submesh [nodes, GPUs per node], its logical mesh [data-parallel,"
        + " tensor-parallel] and its\n"
        + "# auto-sharding options; one pipeline layer per transformer block, marked with\n"
        + "# alpa.mark_pipeline_boundary (layer_option=\"manual\").\n");
    prediction.ifPresent(p -> sb.append(String.format(Locale.ROOT, "# meshplan predicts %.4f s"
        + " per iteration, %.0f tokens/s, MFU %.1f%%, peak memory %s per GPU.%n",
        p.iterationSeconds(), p.tokensPerSecond(), 100 * p.mfu(),
        Units.formatBytes(p.peakMemoryBytesPerGpu()))));
    long[] first = AlpaStages.placement(stages, cluster.nodes(), cluster.gpusPerNode());
    sb.append("# Alpa places the submeshes largest first (get_sliced_virtual_submeshes):\n");
    for (int i = 0; i < stages.size(); i++) {
      AlpaStages.Stage s = stages.get(i);
      sb.append(String.format(Locale.ROOT, "#   stage %d: blocks %d-%d on GPUs %d-%d (%dx%d),"
          + " logical mesh %dx%d, recompute %s, ZeRO-%d%n", i, s.firstLayer(), s.lastLayer(),
          first[i], first[i] + s.devices() - 1, s.hosts(), s.devicesPerHost(),
          s.dataParallel(), s.tensorParallel(), s.recompute().label()
              + (s.recomputeLayers() > 0 ? " (the first " + s.recomputeLayers() + " blocks)" : ""),
          s.zeroStage()));
    }
    sb.append("#\n# Run it on the head node of a Ray cluster of ").append(cluster.nodes())
        .append(" nodes with ").append(cluster.gpusPerNode()).append(" GPUs each, Alpa"
            + " installed\n# (jax 0.3.22 and flax 0.6.2, as Alpa's setup.py pins them):\n"
            + "#   python3 meshplan_alpa.py\n"
            + "# TOKENS_FILE: a .npy file of token ids (one 1-D array) to train on; without it"
            + " the program\n# trains on random tokens, which times the plan. TRAIN_ITERS"
            + " (default 20) iterations, LR (default 3e-4,\n# LLaMA 2's peak learning rate for 7B"
            + " and 13B).\n");
    if (model.dtype() == DType.F16) {
      sb.append("# fp16 without loss scaling, as Alpa's GPT benchmark trains: add a dynamic"
          + " loss scale for long runs.\n");
    }
    sb.append('\n');
  }

  private void constants(StringBuilder sb) {
    Architecture a = model.arch();
    line(sb, "NUM_NODES", Integer.toString(cluster.nodes()));
    line(sb, "GPUS_PER_NODE", Integer.toString(cluster.gpusPerNode()));
    line(sb, "GLOBAL_BATCH", Integer.toString(globalBatch));
    line(sb, "NUM_MICRO_BATCHES", Integer.toString(microbatches));
    line(sb, "PIPELINE_SCHEDULE", gpipe ? "\"gpipe\"" : "\"1f1b\"");
    line(sb, "SEQ_LEN", Integer.toString(model.seq()));
    line(sb, "VOCAB", Integer.toString(model.vocab()));
    line(sb, "HIDDEN", Integer.toString(model.hidden()));
    line(sb, "LAYERS", Integer.toString(model.layers()));
    line(sb, "HEADS", Integer.toString(model.heads()));
    line(sb, "KV_HEADS", Integer.toString(model.kvHeads()));
    line(sb, "HEAD_DIM", Integer.toString(model.hidden() / model.heads()));
    line(sb, "FFN", Integer.toString(model.ffn()));
    line(sb, "NORM", a.norm() == Architecture.Norm.RMS ? "\"rms\"" : "\"layer\"");
    line(sb, "NORM_EPS", Double.toString(a.numerics().normEps()));
    line(sb, "MLP", "\"" + a.mlp().name().toLowerCase(Locale.ROOT) + "\"");
    line(sb, "POSITIONS", a.positions() == Architecture.Positions.ROTARY ? "\"rotary\""
        : "\"learned\"");
    line(sb, "POSITION_ROWS", Integer.toString(a.positionRows()));
    line(sb, "ROPE_THETA", Double.toString(a.numerics().ropeTheta()));
    line(sb, "BIASES", a.biases() ? "True" : "False");
    line(sb, "TIED_EMBEDDINGS", a.tiedEmbeddings() ? "True" : "False");
    line(sb, "PRECISION", "\"" + precision() + "\"");
    double predicted = prediction.map(PipelinePlan.Prediction::iterationSeconds)
        .orElse(Double.NaN);
    line(sb, "PREDICTED_SECONDS", Double.isNaN(predicted) ? "None"
        : String.format(Locale.ROOT, "%.4f", predicted));
    sb.append('\n');
    sb.append("# alpa.ManualStageOption, one entry per stage.\n");
    List<String> ids = new ArrayList<>();
    List<String> physical = new ArrayList<>();
    List<String> logical = new ArrayList<>();
    List<String> options = new ArrayList<>();
    List<String> recompute = new ArrayList<>();
    for (AlpaStages.Stage s : stages) {
      List<String> layers = new ArrayList<>();
      for (int l = s.firstLayer(); l <= s.lastLayer(); l++) {
        layers.add(Integer.toString(l));
      }
      ids.add("[" + String.join(", ", layers) + "]");
      physical.add("[" + s.hosts() + ", " + s.devicesPerHost() + "]");
      logical.add("[" + s.dataParallel() + ", " + s.tensorParallel() + "]");
      options.add("{\"force_batch_dim_to_mesh_dim\": 0, \"prefer_reduce_scatter\": "
          + (s.zeroStage() == 1 ? "True" : "False") + "}");
      recompute.add("\"" + (s.recompute() == Recompute.NONE ? "none" : s.recompute().label())
          + "\"");
    }
    list(sb, "FORWARD_STAGE_LAYER_IDS", ids);
    list(sb, "SUBMESH_PHYSICAL_SHAPES", physical);
    list(sb, "SUBMESH_LOGICAL_SHAPES", logical);
    list(sb, "SUBMESH_AUTOSHARDING_OPTION_DICTS", options);
    list(sb, "STAGE_RECOMPUTE", recompute);
    if (stages.stream().noneMatch(s -> s.recomputeLayers() > 0)) {
      sb.append("LAYER_RECOMPUTE = [mode for ids, mode in zip(FORWARD_STAGE_LAYER_IDS,"
          + " STAGE_RECOMPUTE) for _ in ids]\n\n");
      return;
    }
    // A stage recomputing its first blocks only: each block's own mode.
    List<String> modes = new ArrayList<>();
    for (AlpaStages.Stage s : stages) {
      for (int l = s.firstLayer(); l <= s.lastLayer(); l++) {
        Recompute r = s.recomputeOf(l);
        modes.add("\"" + (r == Recompute.NONE ? "none" : r.label()) + "\"");
      }
    }
    sb.append("# Stages that recompute their first blocks only keep the others' activations.\n");
    list(sb, "LAYER_RECOMPUTE", modes);
    sb.append('\n');
  }

  /** The training precision's name in the program: fp16, bf16 or fp32. */
  private String precision() {
    return switch (model.dtype()) {
      case F16 -> "fp16";
      case BF16 -> "bf16";
      default -> "fp32";
    };
  }

  private static void line(StringBuilder sb, String name, String value) {
    sb.append(name).append(" = ").append(value).append('\n');
  }

  private static void list(StringBuilder sb, String name, List<String> items) {
    sb.append(name).append(" = [\n");
    for (String item : items) {
      sb.append("    ").append(item).append(",\n");
    }
    sb.append("]\n");
  }

  private static final String IMPORTS = """
      import math
      import os
      import time

      import numpy as np

      import alpa
      from alpa.model.model_util import TrainState
      import flax.linen as nn
      from flax.training import train_state
      import jax
      import jax.numpy as jnp
      import optax

      """;

  private static final String MODEL = """
      DTYPE = {"fp16": jnp.float16, "bf16": jnp.bfloat16, "fp32": jnp.float32}[PRECISION]


      class Norm(nn.Module):
          \"""RMSNorm (a gain per channel) or LayerNorm (a gain and a bias), in fp32.\"""

          @nn.compact
          def __call__(self, x):
              h = x.shape[-1]
              y = x.astype(jnp.float32)
              if NORM == "layer":
                  y = y - jnp.mean(y, axis=-1, keepdims=True)
              y = y * jax.lax.rsqrt(jnp.mean(jnp.square(y), axis=-1, keepdims=True) + NORM_EPS)
              y = y * self.param("scale", nn.initializers.ones, (h,))
              if NORM == "layer":
                  y = y + self.param("bias", nn.initializers.zeros, (h,))
              return y.astype(DTYPE)


      def rotary(x):
          \"""Rotary positions on [batch, seq, heads, head_dim], the two halves rotated.\"""
          d = x.shape[-1]
          inv = 1.0 / (ROPE_THETA ** (np.arange(0, d, 2, dtype=np.float64) / d))
          angles = np.arange(x.shape[1], dtype=np.float64)[:, None] * inv[None, :]
          cos = jnp.asarray(np.cos(angles), jnp.float32)[None, :, None, :]
          sin = jnp.asarray(np.sin(angles), jnp.float32)[None, :, None, :]
          a = x[..., : d // 2].astype(jnp.float32)
          b = x[..., d // 2:].astype(jnp.float32)
          return jnp.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1).astype(x.dtype)


      def causal_attention(q, k, v):
          \"""Causal softmax attention as separate kernels; key/value heads serve their query group.\"""
          if KV_HEADS != HEADS:
              k = jnp.repeat(k, HEADS // KV_HEADS, axis=2)
              v = jnp.repeat(v, HEADS // KV_HEADS, axis=2)
          scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(HEAD_DIM))
          s = q.shape[1]
          causal = jnp.tril(jnp.ones((s, s), dtype=jnp.bool_))
          scores = jnp.where(causal[None, None, :, :], scores, jnp.finfo(scores.dtype).min)
          probs = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(q.dtype)
          return jnp.einsum("bhqk,bkhd->bqhd", probs, v)


      class Block(nn.Module):
          \"""One transformer block; "selective" recomputes its attention core in the backward.\"""
          recompute: str

          @nn.compact
          def __call__(self, x):
              b, s, _ = x.shape

              def dense(features, name):
                  return nn.Dense(features, use_bias=BIASES, dtype=DTYPE, name=name)

              h = Norm(name="attention_norm")(x)
              q = dense(HEADS * HEAD_DIM, "wq")(h).reshape(b, s, HEADS, HEAD_DIM)
              k = dense(KV_HEADS * HEAD_DIM, "wk")(h).reshape(b, s, KV_HEADS, HEAD_DIM)
              v = dense(KV_HEADS * HEAD_DIM, "wv")(h).reshape(b, s, KV_HEADS, HEAD_DIM)
              if POSITIONS == "rotary":
                  q, k = rotary(q), rotary(k)
              core = causal_attention
              if self.recompute == "selective":
                  core = jax.checkpoint(causal_attention)
              x = x + dense(HIDDEN, "wo")(core(q, k, v).reshape(b, s, HEADS * HEAD_DIM))
              h = Norm(name="ffn_norm")(x)
              if MLP == "swiglu":
                  m = nn.silu(dense(FFN, "w1")(h)) * dense(FFN, "w3")(h)
              elif MLP == "gelu":
                  m = nn.gelu(dense(FFN, "w1")(h))
              else:
                  m = nn.relu(dense(FFN, "w1")(h))
              return x + dense(HIDDEN, "w2")(m)


      class Decoder(nn.Module):
          \"""Pipeline layer i is block i; the embedding runs in layer 0, the head in the last.\"""

          @nn.compact
          def __call__(self, tokens):
              embed = nn.Embed(VOCAB, HIDDEN, dtype=DTYPE, name="embed")
              x = embed(tokens)
              if POSITIONS == "learned":
                  table = nn.Embed(POSITION_ROWS, HIDDEN, dtype=DTYPE, name="positions")
                  x = x + table(jnp.arange(tokens.shape[1])[None, :])
              for i in range(LAYERS):
                  block = nn.remat(Block) if LAYER_RECOMPUTE[i] == "full" else Block
                  x = block(recompute=LAYER_RECOMPUTE[i], name="block_%d" % i)(x)
                  if i < LAYERS - 1:
                      alpa.mark_pipeline_boundary()
              x = Norm(name="final_norm")(x)
              if TIED_EMBEDDINGS:
                  return embed.attend(x)
              return nn.Dense(VOCAB, use_bias=False, dtype=DTYPE, name="lm_head")(x)


      def cross_entropy(logits, targets):
          \"""The mean next-token loss on fp32 logits.\"""
          logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
          return -jnp.mean(jnp.sum(jax.nn.one_hot(targets, VOCAB) * logp, axis=-1))


      """;

  private static final String TRAINING = """
      class Bf16TrainState(TrainState):
          \"""Alpa's master-copy state with bf16 weights: its own casts updated weights to fp16.\"""

          def apply_gradients(self, *, grads, **kwargs):
              updates, opt_state = self.tx.update(grads, self.opt_state, self.master_copy)
              master = optax.apply_updates(self.master_copy, updates)
              # Each new weight also reads the old one, so that Alpa can donate the old weights
              # to the next iteration's gradient accumulation (Alpa's TrainState does the same).
              params = jax.tree_util.tree_map(
                  lambda new, old: jnp.asarray(new, jnp.bfloat16) + 0.0 * old, master, self.params)
              return self.replace(step=self.step + 1, params=params, master_copy=master,
                                  opt_state=opt_state, **kwargs)

          @classmethod
          def create(cls, *, apply_fn, params, tx, **kwargs):
              master = jax.tree_util.tree_map(lambda x: jnp.asarray(x, jnp.float32), params)
              weights = jax.tree_util.tree_map(lambda x: jnp.asarray(x, jnp.bfloat16), master)
              return cls(step=np.array(0, dtype=np.int32), apply_fn=apply_fn, params=weights,
                         master_copy=master, tx=tx, opt_state=tx.init(master), **kwargs)


      def new_train_state(apply_fn, params):
          tx = optax.adamw(learning_rate=float(os.environ.get("LR", "3e-4")))
          if PRECISION == "fp16":
              return TrainState.create(apply_fn=apply_fn, params=params, tx=tx,
                                       use_master_copy=True, dynamic_scale=None)
          if PRECISION == "bf16":
              return Bf16TrainState.create(apply_fn=apply_fn, params=params, tx=tx,
                                           dynamic_scale=None)
          return train_state.TrainState.create(apply_fn=apply_fn, params=params, tx=tx)


      def train_step(state, batch):
          def loss_fn(params):
              return cross_entropy(state.apply_fn(params, batch["tokens"]), batch["targets"])

          # alpa.grad marks where the microbatches' gradients are accumulated.
          grads = alpa.grad(loss_fn)(state.params)
          return state.apply_gradients(grads=grads)


      def parallel_method():
          return alpa.PipeshardParallel(
              num_micro_batches=NUM_MICRO_BATCHES,
              default_auto_sharding_option=alpa.AutoShardingOption(),
              pipeline_schedule=PIPELINE_SCHEDULE,
              layer_option="manual",
              stage_option=alpa.ManualStageOption(
                  forward_stage_layer_ids=FORWARD_STAGE_LAYER_IDS,
                  submesh_physical_shapes=SUBMESH_PHYSICAL_SHAPES,
                  submesh_logical_shapes=SUBMESH_LOGICAL_SHAPES,
                  submesh_autosharding_option_dicts=SUBMESH_AUTOSHARDING_OPTION_DICTS))


      def batches(seed=0):
          rng = np.random.default_rng(seed)
          path = os.environ.get("TOKENS_FILE")
          tokens = np.load(path, mmap_mode="r") if path else None
          while True:
              if tokens is None:
                  seqs = rng.integers(0, VOCAB, size=(GLOBAL_BATCH, SEQ_LEN + 1), dtype=np.int32)
              else:
                  starts = rng.integers(0, len(tokens) - SEQ_LEN - 1, size=GLOBAL_BATCH)
                  seqs = np.stack([np.asarray(tokens[s:s + SEQ_LEN + 1], dtype=np.int32)
                                   for s in starts])
              yield {"tokens": seqs[:, :-1], "targets": seqs[:, 1:]}


      def main():
          alpa.init(cluster="ray", num_nodes=NUM_NODES, num_devices_per_node=GPUS_PER_NODE)
          model = Decoder()
          data = batches()
          batch = next(data)
          step = alpa.parallelize(train_step, method=parallel_method())

          def create_state():
              params = model.init(jax.random.PRNGKey(0), jnp.ones((1, SEQ_LEN), jnp.int32))
              return new_train_state(model.apply, params)

          state = alpa.parallelize(create_state,
                                   method=alpa.CreateStateParallel(step, batch))()
          for i in range(int(os.environ.get("TRAIN_ITERS", "20"))):
              start = time.time()
              state = step(state, batch)
              step.get_last_executable().sync()
              print("iteration %d: %.3f s (meshplan predicts %s s)"
                    % (i, time.time() - start, PREDICTED_SECONDS), flush=True)
              batch = next(data)
          alpa.shutdown()


      if __name__ == "__main__":
          main()
      """;
}

package io.meshplan.interop.space;

import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The rules that span the whole-cluster search for a request: the microbatch sizes it searches,
 * the tensor-parallel degrees, layer settings and ZeRO stages a stage may take, and the limit on
 * microbatches per iteration.
 */
public final class SearchRules {
  private static final int[] ZERO_STAGES = {0, 1, 3};
  private static final int[] NO_ZERO = {0};
  /**
   * The most microbatches per iteration: the simulator steps through every forward and backward
   * of every microbatch on every stage, so this bounds its events (real jobs use a few thousand).
   */
  static final int MAX_MICROBATCHES = 1 << 16;
  /** Sequences per microbatch on one replica that the search considers. */
  private static final int[] REPLICA_MICROBATCHES = {1, 2, 4, 8};

  private SearchRules() {}

  /**
   * The microbatch sizes a plan searches, one stage DP each: with a fixed microbatch count, the
   * one size it gives; planning with {@code fixedMicrobatches = globalBatch / size} for each size
   * and keeping the best gives the same plan as planning them all at once.
   *
   * @param req the request
   * @return sequences per microbatch, ascending
   */
  public static List<Integer> microbatchSizes(PlanRequest req) {
    return microbatchSizes(req, SearchSpace.of(req).shapes());
  }

  /**
   * Global microbatch sizes (sequences per microbatch over a stage's replicas): the fixed one, else
   * every divisor of the global batch that some stage option can use.
   *
   * @param req the request
   * @param shapes the submesh shapes of the request's search space
   * @return sequences per microbatch, ascending
   */
  public static List<Integer> microbatchSizes(PlanRequest req, List<SubmeshShape> shapes) {
    int gb = req.globalBatch();
    if (req.fixedMicrobatches() > 0) {
      Require.that(gb % req.fixedMicrobatches() == 0, () -> "the global batch " + gb
          + " is not a multiple of " + req.fixedMicrobatches() + " microbatches");
      checkMicrobatches(req.fixedMicrobatches());
      return List.of(gb / req.fixedMicrobatches());
    }
    // A microbatch gives each replica of some stage 1, 2, 4 or 8 sequences, so the candidates are
    // those products that divide the global batch: at most 4 per data-parallel size.
    TreeSet<Integer> sizes = new TreeSet<>();
    TreeSet<Long> every = new TreeSet<>();
    for (SubmeshShape sh : shapes) {
      for (int t : tensorDegrees(req, sh.devices())) {
        for (int cp : contextDegrees(req, sh.devices() / t)) {
          for (int b : REPLICA_MICROBATCHES) {
            long g = (long) b * (sh.devices() / t / cp);
            every.add(g);
            if (g <= gb && gb % g == 0 && gb / g <= MAX_MICROBATCHES) {
              sizes.add((int) g);
            }
          }
        }
      }
    }
    if (sizes.isEmpty()) {
      long largest = every.isEmpty() ? 1 : every.last();
      throw new InputException("the global batch of " + gb + " sequences cannot "
          + "be split into at most " + MAX_MICROBATCHES + " microbatches of 1, 2, 4 or 8 "
          + "sequences per data-parallel replica on this cluster; choose a global batch "
          + (gb > (long) MAX_MICROBATCHES * largest ? "with at most " + (long) MAX_MICROBATCHES
              * largest + " sequences (" + MAX_MICROBATCHES + " microbatches of " + largest
              + ")" : nearest(gb, every)));
    }
    return new ArrayList<>(sizes);
  }

  /**
   * The global batches nearest to one that no microbatch size divides: for each size {@code g}
   * a stage can take ({@code b} sequences on each of its replicas), the largest multiple of {@code
   * g} in at most {@link #MAX_MICROBATCHES} microbatches not above {@code gb} and the next one
   * above it; the largest of those below and the smallest of those above.
   *
   * @param gb the global batch, sequences
   * @param sizes every microbatch size of the search space, sequences
   * @return the advice's words, e.g. "such as 1000 or 1250 sequences"
   */
  static String nearest(long gb, java.util.Collection<Long> sizes) {
    long below = 0;
    long above = Long.MAX_VALUE;
    for (long g : sizes) {
      long down = gb / g;
      if (down >= 1) {
        below = Math.max(below, Math.min(down, MAX_MICROBATCHES) * g);
      }
      long up = down + 1;
      if (up <= MAX_MICROBATCHES) {
        above = Math.min(above, up * g);
      }
    }
    if (below > 0 && above != Long.MAX_VALUE) {
      return "that its microbatches divide, such as " + below + " or " + above + " sequences";
    }
    return "that its microbatches divide, such as "
        + (below > 0 ? below : above) + " sequences";
  }

  /**
   * Refuses more microbatches per iteration than the simulator can step through quickly.
   *
   * @param microbatches microbatches per iteration
   */
  public static void checkMicrobatches(long microbatches) {
    if (microbatches > MAX_MICROBATCHES) {
      throw new InputException(microbatches + " microbatches per iteration are "
          + "more than the limit of " + MAX_MICROBATCHES + "; use larger microbatches or a "
          + "smaller global batch");
    }
  }

  /**
   * Tensor-parallel degrees for a stage of {@code devices} GPUs: divisors of the GPUs per node (so
   * that tensor parallelism stays on NVLink, Narayanan et al. SC'21, section 5.4) that divide the
   * attention heads and the stage.
   *
   * @param req the request
   * @param devices GPUs of the stage
   * @return the degrees, ascending
   */
  public static List<Integer> tensorDegrees(PlanRequest req, int devices) {
    List<Integer> out = new ArrayList<>();
    int m = req.cluster().gpusPerNode();
    for (int t = 1; t <= Math.min(m, devices); t++) {
      if (m % t == 0 && devices % t == 0 && req.model().heads() % t == 0) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * The layer settings a stage of tensor-parallel size {@code t} may take with {@code b} sequences
   * per replica, in the search's order: each recomputation mode, then (with {@code t > 1})
   * sequence parallelism off and on, and the ILP's or Megatron-LM's layouts.
   *
   * @param t tensor-parallel size
   * @param b sequences per microbatch per replica
   * @param modes the recomputation modes searched ({@link
   *     io.meshplan.plan.RuntimeSpace#searchedRecompute})
   * @return the settings
   */
  public static List<LayerSetting> layerSettings(int t, int b, List<Recompute> modes) {
    boolean[] both = t > 1 ? new boolean[] {false, true} : new boolean[] {false};
    List<LayerSetting> out = new ArrayList<>();
    for (Recompute rc : modes) {
      for (boolean sp : both) {
        for (boolean meg : both) {
          out.add(new LayerSetting(t, b, rc, sp, meg));
        }
      }
    }
    return out;
  }

  /**
   * The layer settings of a stage of {@code d x t} GPUs with {@code b} sequences per replica: for
   * a dense model those of {@link #layerSettings(int, int, List)}; for a mixture-of-experts
   * model each of them with every expert layout the stage can hold ({@link #expertLayouts}), and
   * with sequence parallelism whenever {@code t > 1} (Megatron-LM requires it when expert and
   * tensor parallelism are combined, and the token dispatch splits the replica's tokens by
   * sequence).
   *
   * @param req the request
   * @param d data-parallel replicas of the stage
   * @param t tensor-parallel size
   * @param b sequences per microbatch per replica
   * @return the settings
   */
  public static List<LayerSetting> layerSettings(PlanRequest req, int d, int t, int b) {
    io.meshplan.model.MoeShape moe = req.model().arch().moe();
    if (!moe.routed()) {
      return layerSettings(t, b, req.runtime().searchedRecompute());
    }
    List<LayerSetting> out = new ArrayList<>();
    for (LayerSetting ls : layerSettings(t, b, req.runtime().searchedRecompute())) {
      if (t > 1 && !ls.sequenceParallel()) {
        continue;
      }
      for (int[] e : expertLayouts(moe, d, t)) {
        out.add(new LayerSetting(t, b, ls.recompute(), ls.sequenceParallel(), ls.megatron(),
            e[0], e[1]));
      }
    }
    return out;
  }

  /**
   * The layer settings of a stage of {@code d x t} GPUs whose replicas share microbatches of
   * {@code g} sequences: for each context-parallel size {@code CP} ({@link #contextDegrees}) the
   * stage holds {@code d / CP} replicas of {@code CP x t} GPUs, each taking {@code g / (d / CP)}
   * sequences of 1, 2, 4 or 8, with the settings of {@link #layerSettings(PlanRequest, int,
   * int, int)} that the request's runtime can run ({@link PlanRequest#runtime}), each with every
   * exchange of {@link io.meshplan.plan.ContextExchange#searched} above size 1: the ring, the
   * all-gather and, where the heads split, Ulysses' all-to-alls.
   *
   * <p>With context parallelism a replica takes one sequence: {@code CP > 1} with {@code b > 1}
   * sequences is dominated by {@code CP / 2} with {@code b / 2}, which the same stage and
   * microbatch also allow. Both hold {@code b s / CP} tokens of each layer per GPU (the same
   * matrix products and activations) and compute {@code b (s / CP) s / 2} query-key pairs per GPU;
   * but a GPU of the first receives the keys and values of {@code b} whole sequences from {@code
   * CP - 1} others, {@code b s (1 - 1/CP)} tokens' worth, and one of the second {@code (b/2) s (1
   * - 2/CP)}, less than half; the gradient reduction spans the same {@code d} GPUs. Megatron-Core's
   * long-context recipes run context parallelism with micro-batch size 1 likewise.
   *
   * @param req the request
   * @param d GPUs per tensor-parallel rank of the stage (data times context parallelism)
   * @param t tensor-parallel size
   * @param g sequences per microbatch over the stage's replicas
   * @return the settings, by context-parallel size ascending
   */
  public static List<LayerSetting> stageSettings(PlanRequest req, int d, int t, int g) {
    List<LayerSetting> out = new ArrayList<>();
    for (int cp : contextDegrees(req, d)) {
      int b = replicaMicrobatch(g, d / cp);
      if (b == 0 || cp > 1 && b > 1) {
        continue;
      }
      List<io.meshplan.plan.ContextExchange> exchanges =
          io.meshplan.plan.ContextExchange.searched(req.model(), t, cp);
      for (LayerSetting ls : layerSettings(req, d, t, b)) {
        if (req.runtime().refused(t, ls.recompute(), ls.sequenceParallel(), ls.megatron(), cp,
            ls.expertParallel()).isEmpty()) {
          for (io.meshplan.plan.ContextExchange e : exchanges) {
            out.add(ls.withContext(cp, e));
          }
        }
      }
    }
    return out;
  }

  /**
   * The sequence length from which the search splits sequences over GPUs: 32,768 tokens, where
   * Megatron-Core's and NeMo's long-context recipes start to use context parallelism (NeMo's
   * long-sequence performance tables begin there) and where one GPU's attention activations of a
   * single sequence grow past a few GiB.
   */
  public static final int CONTEXT_PARALLEL_FROM = 32_768;

  /**
   * The fewest tokens in each of a context-parallel rank's two chunks: 128, the query rows of
   * one tile of the fused attention kernels (FlashAttention-2's {@code B_r} blocks, Dao,
   * arXiv:2307.08691, section 3.3, and FlashAttention-3's 128-row tiles, Shah et al.,
   * arXiv:2407.08608, section 3). A smaller chunk leaves the kernel's tiles partly empty while
   * each ring step still moves a chunk's keys and values, so finer splits are not searched.
   */
  public static final int CONTEXT_CHUNK_FLOOR = 128;

  /**
   * The context-parallel sizes a stage may use: 1, and from {@link #CONTEXT_PARALLEL_FROM} tokens
   * with fused attention every power of two dividing the stage's {@code d} GPUs per tensor rank
   * whose {@code 2 x CP} chunks split the sequence evenly (Megatron-Core's load balance) into
   * chunks of at least {@link #CONTEXT_CHUNK_FLOOR} tokens.
   *
   * @param req the request
   * @param d GPUs per tensor-parallel rank of the stage
   * @return the sizes, ascending
   */
  public static List<Integer> contextDegrees(PlanRequest req, int d) {
    List<Integer> out = new ArrayList<>(List.of(1));
    int seq = req.model().seq();
    if (seq < CONTEXT_PARALLEL_FROM || req.attention() != io.meshplan.model.Attention.FLASH) {
      return out;
    }
    for (int cp = 2; cp <= d; cp *= 2) {
      if (d % cp == 0 && seq % (2L * cp) == 0 && seq / (2L * cp) >= CONTEXT_CHUNK_FLOOR) {
        out.add(cp);
      }
    }
    return out;
  }

  /**
   * The expert layouts {@code {EP, ETP}} a stage of {@code d x t} GPUs may take: ETP 1, or the
   * tensor-parallel size when it divides the expert size (Megatron-Core's two common choices);
   * EP every divisor of the experts with {@code EP x ETP} dividing the stage's GPUs.
   *
   * @param moe the mixture-of-experts layer
   * @param d data-parallel replicas
   * @param t tensor-parallel size
   * @return the layouts, by ETP then EP ascending
   */
  public static List<int[]> expertLayouts(io.meshplan.model.MoeShape moe, int d, int t) {
    List<int[]> out = new ArrayList<>();
    long gpus = (long) d * t;
    int[] etps = t > 1 && moe.expertFfn() % t == 0 ? new int[] {1, t} : new int[] {1};
    for (int etp : etps) {
      for (int ep = 1; ep <= moe.experts(); ep++) {
        if (moe.experts() % ep == 0 && gpus % ((long) ep * etp) == 0) {
          out.add(new int[] {ep, etp});
        }
      }
    }
    return out;
  }

  /**
   * The ZeRO stages a stage of {@code d} data-parallel replicas may use: 0, 1 and 3, or only 0
   * without data parallelism. ZeRO-2 is priced ({@code simulate --zero-stage 2}) but not
   * searched: it adds a third of the layer-setting space for a stage whose memory lies between
   * ZeRO-1 and ZeRO-3 and whose per-microbatch reduce-scatter ZeRO-3 also pays.
   *
   * @param d data-parallel replicas
   * @return the stages, ascending
   */
  public static int[] zeroStages(int d) {
    return d > 1 ? ZERO_STAGES.clone() : NO_ZERO.clone();
  }

  /**
   * The ZeRO stages of {@link #zeroStages(int)} that the request's runtime can run; for a model
   * that keeps its trained weights in FP8 ({@link io.meshplan.model.Lora#fp8Weights}), only the
   * sharded ones, as Megatron-LM runs {@code --fp8-param-gather} only beside a distributed
   * optimizer or FSDP ({@link io.meshplan.plan.ParallelConfig#checkModel}): ZeRO-1 without data
   * parallelism, as its distributed optimizer runs over one replica.
   *
   * @param req the request
   * @param d data-parallel replicas
   * @return the stages, ascending
   */
  public static int[] zeroStages(PlanRequest req, int d) {
    int[] stages = req.model().lora().fp8Weights()
        ? (d > 1 ? java.util.Arrays.stream(ZERO_STAGES).filter(z -> z > 0).toArray()
            : new int[] {1})
        : zeroStages(d);
    return java.util.Arrays.stream(stages).filter(req.runtime()::allowsZero).toArray();
  }

  /**
   * The shard groups of hybrid sharding a ZeRO-3 stage of {@code d} replicas of {@code t} GPUs
   * may use besides sharding over all of them: one node's replicas, {@code gpusPerNode / t}, when
   * that divides {@code d} and lies strictly between 1 and it: FSDP over the node's NVLink,
   * replicas across the fabric, as torchtitan's HSDP and DeepSpeed's MiCS are run. Other group
   * sizes are priced ({@code simulate --shard-group}) but not searched.
   *
   * Only ZeRO-3 shards in groups, and only where no context or expert group is carved from the
   * replicas.
   *
   * @param req the request
   * @param d data-parallel replicas
   * @param t tensor-parallel size
   * @param zero the ZeRO stage
   * @param cp the context-parallel size
   * @param ep the expert-parallel size
   * @return the groups, empty or one
   */
  public static int[] shardGroups(PlanRequest req, int d, int t, int zero, int cp, int ep) {
    int node = req.cluster().gpusPerNode();
    if (zero != 3 || cp != 1 || ep != 1 || !req.runtime().allowsZero(3) || node % t != 0) {
      return new int[0];
    }
    int g = node / t;
    return g > 1 && g < d && d % g == 0 ? new int[] {g} : new int[0];
  }

  /**
   * The per-replica microbatch when {@code d} replicas share {@code g} sequences.
   *
   * @param g sequences per microbatch over the replicas
   * @param d data-parallel replicas
   * @return sequences per replica, or 0 when they cannot share them as 1, 2, 4 or 8 each
   */
  public static int replicaMicrobatch(int g, int d) {
    if (g % d != 0) {
      return 0;
    }
    int b = g / d;
    for (int c : REPLICA_MICROBATCHES) {
      if (c == b) {
        return b;
      }
    }
    return 0;
  }
}

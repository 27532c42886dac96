package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The mixture-of-experts feed-forward layer of a decoder (Shazeer et al., ICLR'17; Lepikhin et
 * al., GShard, ICLR'21; Fedus et al., Switch Transformer, JMLR 2022): a router picks {@code topK}
 * of {@code experts} gated MLPs per token, and optional shared experts run on every token
 * (DeepSeekMoE, Dai et al. 2024). Every block of a model with this shape is a mixture-of-experts
 * block (Mixtral, Qwen3-MoE, GPT-OSS) except the listed dense blocks (DeepSeek-V3's first three,
 * Qwen3-MoE's {@code mlp_only_layers}), whose MLP is a dense gated MLP of {@code denseFfn}.
 *
 * @param experts routed experts E; {@code 0} for a dense model
 * @param topK experts each token is routed to, k
 * @param expertFfn the inner size of one routed expert ({@code moe_intermediate_size}), elements
 * @param sharedFfn the inner size of the shared experts together ({@code n_shared_experts *
 *     moe_intermediate_size}), {@code 0} for none
 * @param expertBiases whether each expert's matrices and the router have biases (GPT-OSS)
 * @param capacityFactor how the router is trained: each expert takes at most this multiple of
 *     its even share of the tokens and drops the rest (Megatron-Core's {@code
 *     moe_expert_capacity_factor}, GShard's capacity), or {@code 0} for dropless routing (every
 *     token kept, Megatron-Core's default)
 * @param imbalance the busiest GPU's expert rows over the balanced mean, at least 1; 1 assumes
 *     the load-balancing loss evens the load out. The pipeline waits for the busiest GPU.
 * @param denseLayers the blocks (from 0, ascending) whose MLP is dense; empty when every block
 *     routes to experts
 * @param denseFfn the inner size of the dense blocks' MLP, elements; {@code 0} without dense
 *     blocks
 * @param groups the router's expert groups for group-limited routing (DeepSeek-V3's {@code
 *     n_group}, Megatron-Core's {@code moe_router_num_groups}): the experts split into this many
 *     equal groups in order; 1 for none
 * @param groupTopK the groups each token's experts may come from ({@code topk_group},
 *     Megatron-Core's {@code moe_router_group_topk}); 1 without groups. DeepSeek-V3 places a
 *     group on a node and so sends each token to at most 4 nodes (DeepSeek-AI 2024, "DeepSeek-V3
 *     Technical Report", arXiv:2412.19437, section 2.1.2, node-limited routing)
 * @param sharedGate whether the shared experts' output is scaled per token by {@code sigmoid(x
 *     w)}, one {@code h}-vector of weights (Qwen3-Next's {@code shared_expert_gate})
 * @param latent the width the routed experts work in, elements, or {@code 0} for the hidden size:
 *     Nemotron 3's LatentMoE (NVIDIA, "Nemotron 3 Super" model card; Megatron-Core's {@code
 *     moe_latent_size}, {@code megatron/core/transformer/moe/moe_layer.py} at d98e8a6, 265-304,
 *     488-491, 583-593) projects each token from {@code h} down to this width ({@code
 *     fc1_latent_proj}, {@code h x latent}, once per token, not per expert) before the dispatch,
 *     so the all-to-alls carry rows of this width and each expert's matrices are {@code latent x
 *     f_e}; after the combine {@code fc2_latent_proj} projects back to {@code h}. The router and
 *     the shared experts see the full hidden state. Both projections are replicated under
 *     tensor parallelism ({@code parallel_mode="duplicated"})
 */
public record MoeShape(int experts, int topK, int expertFfn, int sharedFfn,
    boolean expertBiases, double capacityFactor, double imbalance,
    java.util.List<Integer> denseLayers, int denseFfn, int groups, int groupTopK,
    boolean sharedGate, int latent)
    implements java.io.Serializable {
  private static final long serialVersionUID = 5L;

  /**
   * A layer whose experts work in the hidden size.
   *
   * @param experts routed experts E
   * @param topK experts per token k
   * @param expertFfn one expert's inner size
   * @param sharedFfn the shared experts' inner size, 0 for none
   * @param expertBiases whether experts and router have biases
   * @param capacityFactor the capacity factor, 0 for dropless
   * @param imbalance the busiest GPU's load over the mean, at least 1
   * @param denseLayers the dense blocks, ascending
   * @param denseFfn their MLP's inner size, 0 without dense blocks
   * @param groups the router's expert groups, 1 for none
   * @param groupTopK the groups a token's experts may come from, 1 without groups
   * @param sharedGate whether the shared experts' output is gated per token
   */
  public MoeShape(int experts, int topK, int expertFfn, int sharedFfn, boolean expertBiases,
      double capacityFactor, double imbalance, java.util.List<Integer> denseLayers,
      int denseFfn, int groups, int groupTopK, boolean sharedGate) {
    this(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor, imbalance,
        denseLayers, denseFfn, groups, groupTopK, sharedGate, 0);
  }

  /**
   * A layer without a shared-expert gate.
   *
   * @param experts routed experts E
   * @param topK experts per token k
   * @param expertFfn one expert's inner size
   * @param sharedFfn the shared experts' inner size, 0 for none
   * @param expertBiases whether experts and router have biases
   * @param capacityFactor the capacity factor, 0 for dropless
   * @param imbalance the busiest GPU's load over the mean, at least 1
   * @param denseLayers the dense blocks, ascending
   * @param denseFfn their MLP's inner size, 0 without dense blocks
   * @param groups the router's expert groups, 1 for none
   * @param groupTopK the groups a token's experts may come from, 1 without groups
   */
  public MoeShape(int experts, int topK, int expertFfn, int sharedFfn, boolean expertBiases,
      double capacityFactor, double imbalance, java.util.List<Integer> denseLayers,
      int denseFfn, int groups, int groupTopK) {
    this(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor, imbalance,
        denseLayers, denseFfn, groups, groupTopK, false);
  }

  /**
   * A layer routed without group limits.
   *
   * @param experts routed experts E
   * @param topK experts per token k
   * @param expertFfn one expert's inner size
   * @param sharedFfn the shared experts' inner size, 0 for none
   * @param expertBiases whether experts and router have biases
   * @param capacityFactor the capacity factor, 0 for dropless
   * @param imbalance the busiest GPU's load over the mean, at least 1
   * @param denseLayers the dense blocks, ascending
   * @param denseFfn their MLP's inner size, 0 without dense blocks
   */
  public MoeShape(int experts, int topK, int expertFfn, int sharedFfn, boolean expertBiases,
      double capacityFactor, double imbalance, java.util.List<Integer> denseLayers,
      int denseFfn) {
    this(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor, imbalance,
        denseLayers, denseFfn, 1, 1);
  }

  /**
   * A layer of every block (no dense blocks).
   *
   * @param experts routed experts E
   * @param topK experts per token k
   * @param expertFfn one expert's inner size
   * @param sharedFfn the shared experts' inner size, 0 for none
   * @param expertBiases whether experts and router have biases
   * @param capacityFactor the capacity factor, 0 for dropless
   * @param imbalance the busiest GPU's load over the mean
   */
  public MoeShape(int experts, int topK, int expertFfn, int sharedFfn, boolean expertBiases,
      double capacityFactor, double imbalance) {
    this(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor, imbalance,
        java.util.List.of(), 0);
  }

  /** A dense model: no experts. */
  public static final MoeShape DENSE = new MoeShape(0, 0, 0, 0, false);

  /**
   * A layer trained dropless with balanced routing.
   *
   * @param experts routed experts E
   * @param topK experts per token k
   * @param expertFfn one expert's inner size
   * @param sharedFfn the shared experts' inner size, 0 for none
   * @param expertBiases whether experts and router have biases
   */
  public MoeShape(int experts, int topK, int expertFfn, int sharedFfn, boolean expertBiases) {
    this(experts, topK, expertFfn, sharedFfn, expertBiases, 0, 1);
  }

  /** The most routed experts (real models have 8 to 384; the Hugging Face reader's bound). */
  public static final int MAX_EXPERTS = 1 << 16;

  /** Validates the fields. */
  public MoeShape {
    Require.that(experts >= 0 && experts <= MAX_EXPERTS,
        () -> "the number of experts must be from 0 to " + MAX_EXPERTS + ", got " + experts);
    if (experts == 0) {
      Require.that(topK == 0 && expertFfn == 0 && sharedFfn == 0 && !expertBiases,
          "a dense model has no expert sizes");
    } else {
      Require.that(topK >= 1 && topK <= experts,
          () -> "experts per token must be between 1 and the "
          + experts + " experts, got " + topK);
      Require.that(expertFfn > 0 && expertFfn <= ModelSpec.MAX_FFN,
          () -> "expert intermediate size "
          + "must be from 1 to " + ModelSpec.MAX_FFN + ", got " + expertFfn);
      Require.that(sharedFfn >= 0 && sharedFfn <= ModelSpec.MAX_FFN,
          () -> "the shared experts' size "
          + "must be from 0 to " + ModelSpec.MAX_FFN + ", got " + sharedFfn);
    }
    Require.that(capacityFactor == 0 || capacityFactor > 0 && Double.isFinite(capacityFactor),
        () -> "the expert capacity factor must be > 0 (or 0 for dropless), got " + capacityFactor);
    Require.that(imbalance >= 1 && imbalance <= Math.max(1, experts),
        () -> "the expert load imbalance must be between 1 and the " + experts + " experts (a GPU "
        + "cannot take more than every token's copies), got " + imbalance);
    Require.that(latent >= 0 && latent <= ModelSpec.MAX_FFN && (latent == 0 || experts > 0),
        () -> "the experts' latent width must be from 1 to " + ModelSpec.MAX_FFN
        + " (or 0 for none), and only experts have one; got " + latent);
    denseLayers = java.util.List.copyOf(Require.nonNull(denseLayers, "denseLayers"));
    for (int i = 0; i < denseLayers.size(); i++) {
      int l = denseLayers.get(i);
      int at = i;
      // The message is made only on failure, naming the entry: the list may hold 2^17 layers.
      Require.that(l >= 0 && (i == 0 || l > denseLayers.get(i - 1)),
          () -> "dense layers must be ascending layer numbers from 0; entry " + at + " is " + l);
    }
    Require.that(denseFfn <= ModelSpec.MAX_FFN,
        () -> "the dense blocks' inner size must be at most "
        + ModelSpec.MAX_FFN + ", got " + denseFfn);
    Require.that(denseLayers.isEmpty() ? denseFfn == 0 : experts > 0 && denseFfn > 0,
        () -> "dense blocks among expert blocks need a positive inner size, and only they have "
        + "one; got " + denseFfn);
    Require.that(groups >= 1 && groupTopK >= 1 && groupTopK <= groups
        && (groups == 1 || experts % groups == 0 && (long) groupTopK * (experts / groups) >= topK),
        () -> "router groups must divide the " + experts + " experts, and the groups a token "
        + "may use must hold its " + topK + " experts; got " + groupTopK + " of " + groups);
  }

  /**
   * These experts routed within {@code topGroups} of {@code count} groups.
   *
   * @param count expert groups, 1 for none
   * @param topGroups the groups a token's experts may come from
   * @return the shape
   */
  public MoeShape withGroupLimit(int count, int topGroups) {
    return new MoeShape(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor,
        imbalance, denseLayers, denseFfn, count, topGroups, sharedGate, latent);
  }

  /**
   * The expected number of distinct parts a token's {@code k} experts fall in, when the experts
   * are split in order into {@code parts} equal parts (the GPUs or nodes of an expert-parallel
   * group) and routing is uniform, as under Megatron-Core's {@code
   * moe_router_force_load_balancing} (random router logits): part {@code p} holds {@code E/P}
   * experts, and a token misses it with probability {@code C(S - E/P, k) / C(S, k)} among the
   * {@code S} experts it may choose from. With group-limited routing a token first picks {@code
   * M} of the {@code G} groups at random, so {@code S = M E / G}: when each part holds {@code G/P}
   * whole groups, the number {@code j} of its groups picked is hypergeometric and the part holds
   * {@code j E / G} of the {@code S}; when a group spans {@code P/G} parts, each part's group is
   * picked with probability {@code M / G}; parts that split the groups otherwise are counted
   * without the limit, an upper bound. DeepEP and Hybrid-EP send a token once to each
   * destination node this counts (DeepEP, {@code tests/test_internode.py}: {@code
   * num_rdma_token_sent} counts a token once per node it reaches).
   *
   * @param parts P, which divides the experts
   * @return the expected distinct parts, between 1 and {@code min(P, k)}
   */
  public double expectedParts(int parts) {
    Require.that(routed() && parts >= 1 && experts % parts == 0, () -> "the " + experts
        + " experts cannot be split into " + parts + " equal parts");
    int perPart = experts / parts;
    int choose = groupTopK * (experts / groups);
    double touched = 0;
    if (groups == 1) {
      touched = 1 - missProbability(choose, perPart, topK);
    } else if (groups % parts == 0) {
      int held = groups / parts;
      int perGroup = experts / groups;
      for (int j = 0; j <= Math.min(held, groupTopK); j++) {
        double pick = hypergeometric(groups, held, groupTopK, j);
        touched += pick * (1 - missProbability(choose, j * perGroup, topK));
      }
    } else if (parts % groups == 0) {
      touched = (double) groupTopK / groups * (1 - missProbability(choose, perPart, topK));
    } else {
      // Parts that split the groups unevenly: the limit is left out, which can only add
      // destinations (an upper bound).
      touched = 1 - missProbability(experts, perPart, topK);
    }
    return parts * touched;
  }

  /** C(n - m, k) / C(n, k): the chance that k of n draws without replacement miss m marked. */
  private static double missProbability(int n, int m, int k) {
    double p = 1;
    for (int i = 0; i < k; i++) {
      if (n - m - i <= 0) {
        return 0;
      }
      p *= (double) (n - m - i) / (n - i);
    }
    return p;
  }

  /** P(j marked among k draws without replacement from n holding m marked). */
  private static double hypergeometric(int n, int m, int k, int j) {
    return Math.exp(logChoose(m, j) + logChoose(n - m, k - j) - logChoose(n, k));
  }

  private static double logChoose(int n, int k) {
    if (k < 0 || k > n) {
      return Double.NEGATIVE_INFINITY;
    }
    double s = 0;
    for (int i = 0; i < k; i++) {
      s += Math.log(n - i) - Math.log(i + 1);
    }
    return s;
  }

  /**
   * These experts with dense blocks.
   *
   * @param layers the dense blocks, ascending
   * @param ffn their MLP's inner size
   * @return the shape
   */
  public MoeShape withDenseLayers(java.util.List<Integer> layers, int ffn) {
    return new MoeShape(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor,
        imbalance, layers, ffn, groups, groupTopK, sharedGate, latent);
  }

  /**
   * Whether block {@code layer} has a dense MLP.
   *
   * @param layer the block, from 0
   * @return true for a listed dense block (always false for a dense model's shape, whose
   *     blocks are all dense but not listed)
   */
  public boolean denseLayer(int layer) {
    return java.util.Collections.binarySearch(denseLayers, layer) >= 0;
  }

  /**
   * The dense blocks among {@code first..last}.
   *
   * @param first the first block, from 0
   * @param last the last block, inclusive
   * @return how many of them are listed dense blocks
   */
  public int denseIn(int first, int last) {
    if (last < first) {
      return 0;
    }
    return insertion(last + 1) - insertion(first);
  }

  private int insertion(int layer) {
    int i = java.util.Collections.binarySearch(denseLayers, layer);
    return i >= 0 ? i : -i - 1;
  }

  /**
   * This layer trained with another routing.
   *
   * @param newCapacity the capacity factor, 0 for dropless
   * @param newImbalance the busiest GPU's load over the mean, at least 1
   * @return the shape
   */
  public MoeShape withRouting(double newCapacity, double newImbalance) {
    return new MoeShape(experts, topK, expertFfn, sharedFfn, expertBiases, newCapacity,
        newImbalance, denseLayers, denseFfn, groups, groupTopK, sharedGate, latent);
  }

  /**
   * The busiest GPU's expert rows over the balanced mean: the imbalance, capped by the capacity
   * when tokens are dropped.
   *
   * @return the load factor
   */
  public double load() {
    return capacityFactor > 0 ? Math.min(imbalance, capacityFactor) : imbalance;
  }

  /**
   * These experts with another inner size.
   *
   * @param newExpertFfn the inner size of one routed expert, elements
   * @return the shape
   */
  public MoeShape withExpertFfn(int newExpertFfn) {
    return new MoeShape(experts, topK, newExpertFfn, sharedFfn, expertBiases, capacityFactor,
        imbalance, denseLayers, denseFfn, groups, groupTopK, sharedGate, latent);
  }

  /**
   * Whether the model has experts.
   *
   * @return {@code experts > 0}
   */
  public boolean routed() {
    return experts > 0;
  }

  /**
   * The parameters of one block's mixture-of-experts layer of gated experts ({@link
   * #parameters(int, boolean)}).
   *
   * @param hidden the hidden size h
   * @return parameters, elements
   */
  public long parameters(int hidden) {
    return parameters(hidden, true);
  }

  /**
   * The parameters of one block's mixture-of-experts layer: the router ({@code h x E}, plus its
   * bias), every routed expert's matrices ({@code 3 h f_e} gated, plus {@code 2 f_e + h} of
   * biases; {@code 2 h f_e} and {@code f_e + h} for two-matrix experts, Nemotron 3's squared
   * ReLU), the shared experts' ({@code 3 h f_s} or {@code 2 h f_s}) and their gate's {@code h}.
   * The experts are MLPs of the model's kind. With a latent width {@code l} the routed experts'
   * matrices are {@code l x f_e} and the two latent projections add {@code 2 h l}.
   *
   * @param hidden the hidden size h
   * @param gated whether the experts have a gate matrix
   * @return parameters, elements
   */
  public long parameters(int hidden, boolean gated) {
    long h = hidden;
    long router = Math.addExact(Math.multiplyExact(h, experts), expertBiases ? experts : 0);
    long shared = Math.addExact(Math.multiplyExact((gated ? 3 : 2) * h, sharedFfn),
        sharedGate ? h : 0);
    return Math.addExact(Math.addExact(Math.addExact(router, expertParameters(hidden, gated)),
        shared), Math.multiplyExact(2 * h, latent));
  }

  /**
   * The width the routed experts work in: {@link #latent} where set, the hidden size otherwise.
   *
   * @param hidden the hidden size h
   * @return elements
   */
  public int expertWidth(int hidden) {
    return latent > 0 ? latent : hidden;
  }

  /**
   * This layer with its routed experts in a latent width (Nemotron 3's LatentMoE).
   *
   * @param width the latent width, elements; 0 for the hidden size
   * @return the shape
   */
  public MoeShape withLatent(int width) {
    return new MoeShape(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor,
        imbalance, denseLayers, denseFfn, groups, groupTopK, sharedGate, width);
  }

  /**
   * The parameters of the routed experts alone, the part expert parallelism shards.
   *
   * @param hidden the hidden size h
   * @return {@code E (3 h f_e + biases)}, elements
   */
  public long expertParameters(int hidden) {
    return expertParameters(hidden, true);
  }

  /**
   * The routed experts' parameters, gated (three matrices) or not (two).
   *
   * @param hidden the hidden size h
   * @param gated whether each expert has a gate matrix
   * @return {@code E ((3 or 2) w f_e + biases)}, elements, with {@code w} the {@link
   *     #expertWidth}
   */
  public long expertParameters(int hidden, boolean gated) {
    long h = expertWidth(hidden);
    long expert = Math.addExact(Math.multiplyExact((gated ? 3 : 2) * h, expertFfn),
        expertBiases ? (gated ? 2L : 1L) * expertFfn + h : 0);
    return Math.multiplyExact(expert, experts);
  }

  /**
   * This layer with its shared experts' output gated per token (Qwen3-Next).
   *
   * @return the layer
   */
  public MoeShape withSharedGate() {
    Require.that(sharedFfn > 0, "a shared-expert gate needs shared experts");
    return new MoeShape(experts, topK, expertFfn, sharedFfn, expertBiases, capacityFactor,
        imbalance, denseLayers, denseFfn, groups, groupTopK, true, latent);
  }
}

package io.meshplan.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * How context parallelism gives each GPU's attention what it needs of the other GPUs' shares of
 * the sequence: Megatron-Core's {@code --cp-comm-type} (Transformer Engine's {@code
 * cp_comm_type}, NVIDIA/Megatron-LM d98e8a6, {@code megatron/training/arguments.py}).
 */
public enum ContextExchange {
  /**
   * The key and value blocks passed round a ring of the {@code CP} GPUs in {@code CP - 1} steps,
   * each under the attention of the block before it ({@code p2p}, the default).
   */
  P2P("p2p"),
  /**
   * The keys and values all-gathered before the attention and their gradients reduce-scattered
   * after it, nothing overlapped ({@code all_gather}).
   */
  ALL_GATHER("all_gather"),
  /**
   * DeepSpeed-Ulysses' head-parallel exchange ({@code a2a}): an all-to-all turns each GPU's share
   * of the sequence for all heads into the whole sequence for {@code 1/CP} of the heads before
   * the attention core, another turns its output back; the backward pass runs both again for
   * the gradients. Each GPU's attention kernel then runs over the whole sequence (Jacobs et al.,
   * "DeepSpeed Ulysses", arXiv:2309.14509).
   */
  ALL_TO_ALL("a2a");

  private final String word;

  ContextExchange(String word) {
    this.word = word;
  }

  /**
   * The word Megatron-LM's {@code --cp-comm-type} and meshplan's flag and plan files use.
   *
   * @return p2p, all_gather or a2a
   */
  public String word() {
    return word;
  }

  /** torchtitan's name of {@link #ALL_GATHER}, which the command line takes too. */
  private static final String ALL_GATHER_ALIAS = "allgather";

  /**
   * The exchange a plan file's word names: {@link #word()} exactly.
   *
   * @param w the word
   * @return the exchange, or empty for another word
   */
  public static Optional<ContextExchange> ofWord(String w) {
    for (ContextExchange e : values()) {
      if (e.word.equals(w)) {
        return Optional.of(e);
      }
    }
    return Optional.empty();
  }

  /**
   * The exchange a command-line word names, in any case; {@code allgather}, torchtitan's name,
   * is {@code all_gather}.
   *
   * @param w the word
   * @return the exchange, or empty for another word
   */
  public static Optional<ContextExchange> parse(String w) {
    String k = w.toLowerCase(Locale.ROOT);
    return k.equals(ALL_GATHER_ALIAS) ? Optional.of(ALL_GATHER) : ofWord(k);
  }

  /**
   * The words {@link #parse} takes, each exchange's followed by its alias.
   *
   * @return p2p, all_gather, allgather, a2a
   */
  public static List<String> words() {
    List<String> out = new ArrayList<>();
    for (ContextExchange e : values()) {
      out.add(e.word);
      if (e == ALL_GATHER) {
        out.add(ALL_GATHER_ALIAS);
      }
    }
    return List.copyOf(out);
  }

  /**
   * The exchange a boolean of the ring or all-gather choice names.
   *
   * @param allGather whether all-gathered
   * @return {@link #ALL_GATHER} or {@link #P2P}
   */
  public static ContextExchange of(boolean allGather) {
    return allGather ? ALL_GATHER : P2P;
  }

  /**
   * The exchanges a search tries for a context-parallel size on a model: the ring and the
   * all-gather everywhere; Ulysses' all-to-alls where each tensor rank's query and key/value
   * heads split over the context group ({@link ParallelConfig#checkHeadSplit}) and the sequences
   * are not packed documents. A hybrid or latent-attention model keeps the ring, the one
   * exchange its mixers' and MLA's context parallelism is priced for in a search.
   *
   * @param model the model
   * @param tensorParallel the tensor-parallel size
   * @param contextParallel the context-parallel size; 1 (nothing exchanged) gives the ring alone,
   *     the unsplit setting's default
   * @return the exchanges, {@link #P2P} first
   */
  public static List<ContextExchange> searched(io.meshplan.model.ModelSpec model,
      int tensorParallel, int contextParallel) {
    if (contextParallel <= 1 || model.arch().hybrid().on() || model.arch().attn().mla().on()) {
      return List.of(P2P);
    }
    List<ContextExchange> out = new ArrayList<>(List.of(P2P, ALL_GATHER));
    if (!model.packing().packed() && ParallelConfig.headsSplit(tensorParallel, contextParallel,
        model.heads(), model.kvHeads())) {
      out.add(ALL_TO_ALL);
    }
    return List.copyOf(out);
  }

  /**
   * A context-parallel size in reports' words: {@code cp8}, with the exchange after a slash
   * where it is not the ring ({@code cp8/a2a}).
   *
   * @param contextParallel the size, above 1
   * @return the words
   */
  public String label(int contextParallel) {
    return "cp" + contextParallel + (this == P2P ? "" : "/" + word);
  }
}

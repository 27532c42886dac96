package io.meshplan.model;

import java.util.Locale;
import java.util.Optional;

/**
 * The kernels that move a mixture-of-experts block's tokens to their experts and back. Each value
 * is a Megatron-Core token dispatcher ({@code moe_token_dispatcher_type}, {@code
 * moe_flex_dispatcher_backend} in {@code megatron/core/transformer/transformer_config.py}, read at
 * d98e8a6):
 * <ul>
 *   <li>{@link #ALLTOALL}: NCCL all-to-alls of every (token, expert) copy ({@code
 *       MoEAlltoAllTokenDispatcher}); a token routed to two experts of one GPU goes there twice;
 *   <li>{@link #DEEPEP}: DeepEP's normal kernels ({@code flex} with the {@code deepep} backend),
 *       which send a token once to each node it is routed to over RDMA and forward it to the
 *       node's GPUs over NVLink (DeepEP {@code docs/legacy.md}, "Normal kernels with NVLink and
 *       RDMA forwarding");
 *   <li>{@link #HYBRIDEP}: NVIDIA's Hybrid-EP ({@code flex} with the {@code hybridep} backend),
 *       the same hierarchy with TMA copies on few streaming multiprocessors (DeepEP branch {@code
 *       hybrid-ep}, {@code docs/README_Hybrid-EP.md}).
 * </ul>
 */
public enum ExpertDispatcher {
  /** NCCL all-to-alls of every routed copy: Megatron-Core's {@code alltoall}. */
  ALLTOALL("alltoall"),
  /** DeepEP's normal kernels: Megatron-Core's {@code flex} with {@code deepep}. */
  DEEPEP("deepep"),
  /** Hybrid-EP: Megatron-Core's {@code flex} with {@code hybridep}. */
  HYBRIDEP("hybridep");

  private final String word;

  ExpertDispatcher(String word) {
    this.word = word;
  }

  /**
   * The name on the command line and in plan files.
   *
   * @return e.g. {@code hybridep}
   */
  public String word() {
    return word;
  }

  /**
   * Whether the dispatcher sends a token once per destination node rather than once per routed
   * expert.
   *
   * @return true for DeepEP and Hybrid-EP
   */
  public boolean deduplicates() {
    return this != ALLTOALL;
  }

  /**
   * Reads a dispatcher's name.
   *
   * @param text the name, any case
   * @return the dispatcher, or empty for an unknown name
   */
  public static Optional<ExpertDispatcher> of(String text) {
    for (ExpertDispatcher d : values()) {
      if (d.word.equals(text.toLowerCase(Locale.ROOT))) {
        return Optional.of(d);
      }
    }
    return Optional.empty();
  }

  /**
   * Every name, for messages.
   *
   * @return e.g. {@code alltoall, deepep, hybridep}
   */
  public static String words() {
    StringBuilder b = new StringBuilder();
    for (ExpertDispatcher d : values()) {
      b.append(b.length() == 0 ? "" : ", ").append(d.word);
    }
    return b.toString();
  }
}

package io.meshplan.plan;

import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether the pipeline split counts the embedding and the loss as layers, as Megatron-Core's
 * {@code --account-for-embedding-in-pipeline-split} and {@code --account-for-loss-in-pipeline-split}
 * do ({@code get_num_layers_to_build} in {@code megatron/core/transformer/transformer_block.py},
 * read at d98e8a6): the split runs over {@code layers + 1} (or {@code + 2}) layers in equal shares
 * per pipeline stage and model chunk, and the first chunk of the first stage (the last chunk of
 * the last stage) builds one transformer layer fewer, its place taken by the embedding (the loss).
 * Megatron-Bridge's Qwen3-235B recipes lay out their 94 layers this way (96 in 32 chunks of 3).
 *
 * @param embedding the embedding counts as a layer of the first chunk
 * @param loss the LM head and loss count as a layer of the last chunk
 */
public record SplitAccounting(boolean embedding, boolean loss) implements PipelineSplit {
  /** Neither is counted: the default. */
  public static final SplitAccounting NONE = new SplitAccounting(false, false);

  /** Whether either is counted. */
  @Override
  public boolean any() {
    return embedding || loss;
  }

  @Override
  public int[] chunkLayers(int layers, int pipelineParallel, int virtualStages) {
    int chunks = pipelineParallel * virtualStages;
    int per = counted(layers) / chunks;
    int[] out = new int[chunks];
    java.util.Arrays.fill(out, per);
    out[0] -= embedding ? 1 : 0;
    out[chunks - 1] -= loss ? 1 : 0;
    return out;
  }

  /**
   * Megatron-Core's rules ({@code TransformerConfig.__post_init__}): not with stated first- or
   * last-stage layers; the counted layers divisible by the pipeline stages, and each stage's share
   * by its model chunks. A chunk left without a transformer layer (one layer per chunk and the
   * embedding or loss in its place) is legal in Megatron-Core but not a stage meshplan can price,
   * and is refused.
   */
  @Override
  public void check(int layers, int pipelineParallel, int virtualStages, boolean statedStages) {
    if (!any()) {
      return;
    }
    if (statedStages) {
      throw new InputException(flags() + " cannot be given with --first-stage-layers or "
          + "--last-stage-layers, as in Megatron-LM");
    }
    long counted = counted(layers);
    if (counted % pipelineParallel != 0) {
      throw new InputException("the model's " + layers + " layers + " + (counted - layers)
          + " counted by " + flags() + " = " + counted + " are not divisible by pipeline-parallel"
          + " size " + pipelineParallel);
    }
    long perStage = counted / pipelineParallel;
    if (perStage % virtualStages != 0) {
      throw new InputException("the " + perStage + " layers per pipeline stage counted by "
          + flags() + " are not divisible by virtual stages " + virtualStages);
    }
    if (perStage / virtualStages < 2) {
      throw new InputException(flags() + " leave a model chunk with no transformer layer (one "
          + "layer per chunk); meshplan prices chunks that hold at least one");
    }
  }

  @Override
  public List<List<String>> megatronArgs() {
    return megatronFlags().stream().map(List::of).toList();
  }

  /** The layers the split runs over. */
  private int counted(int layers) {
    return layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  }

  /**
   * The Megatron-LM flags, in its spelling.
   *
   * @return the flags given, embedding first
   */
  public List<String> megatronFlags() {
    List<String> out = new ArrayList<>();
    if (embedding) {
      out.add("--account-for-embedding-in-pipeline-split");
    }
    if (loss) {
      out.add("--account-for-loss-in-pipeline-split");
    }
    return out;
  }

  /** The flags in words, for errors. */
  private String flags() {
    return String.join(" and ", megatronFlags());
  }
}

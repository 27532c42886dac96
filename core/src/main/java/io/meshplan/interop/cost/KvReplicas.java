package io.meshplan.interop.cost;

import io.meshplan.graph.Instruction;
import io.meshplan.graph.TensorShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.ParamRole;
import io.meshplan.model.TrainingGraph;
import io.meshplan.model.TrainingOptions;
import io.meshplan.sharding.ShardingSpec;
import java.util.Map;

/**
 * Key/value heads over more tensor ranks than groups, as Megatron-Core runs them and {@link
 * IlpLayerCostModel} prices them under Megatron-LM's layouts ({@code
 * megatron/core/transformer/attention.py} at NVIDIA/Megatron-LM d98e8a6, lines 349-367 and
 * 1850-1880; the group count a multiple or a divisor of the tensor size, {@code
 * transformer_config.py:1461-1468}, since Megatron-Core 0.16): the query/key/value projection
 * split evenly, its whole output all-gathered, each rank keeping its query heads and its group's
 * whole key and value head ({@link TrainingOptions#kvReplicas}).
 */
final class KvReplicas {
  private KvReplicas() {}

  /**
   * How many tensor ranks hold each key/value head: tensor size / key/value heads when the
   * tensor size is a multiple of them under Megatron-LM's layouts, else 1. Latent attention has
   * no key/value heads to repeat.
   *
   * @param m the model
   * @param t the tensor size
   * @param megatron whether the solve fixes Megatron-LM's layouts
   * @return the replicas of each key/value head
   */
  static int of(ModelSpec m, int t, boolean megatron) {
    int g = m.kvHeads();
    boolean repeat = megatron && t > g && t % g == 0 && !m.arch().attn().mla().on()
        && m.family() != ModelSpec.Family.ALPA_MLP;
    return repeat ? t / g : 1;
  }

  /**
   * Pins the repeat's 0/1 matrices ({@link TrainingOptions#KV_REPLICAS}) split by columns over
   * the tensor ranks, so that each rank computes and keeps its own heads.
   *
   * @param tg the training graph
   * @param fixed the layouts fixed so far, added to
   */
  static void fix(TrainingGraph tg, Map<Integer, ShardingSpec> fixed) {
    if (tg.options().kvReplicas() == 1) {
      return;
    }
    for (Instruction ins : tg.graph().instructions()) {
      if (tg.role(ins.id()).orElse(null) == ParamRole.CONSTANT
          && ins.shape() instanceof TensorShape sh && sh.rank() == 2
          && java.util.Arrays.asList(ins.opName().split("/"))
              .contains(TrainingOptions.KV_REPLICAS)) {
        fixed.put(ins.id(), ShardingSpec.split(2, 1, 1));
      }
    }
  }
}

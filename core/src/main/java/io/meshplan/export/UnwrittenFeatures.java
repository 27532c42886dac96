package io.meshplan.export;

import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.Lora;
import io.meshplan.model.Packing;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * A framework writer that lacks features other writers have ({@link ExportTarget}'s flags), said
 * before its own checks:
 * <ul>
 *   <li>DeepEP and Hybrid-EP ({@link ExpertDispatcher#deduplicates}): only Megatron-LM's export
 *       writes the flex dispatcher's backends ({@link MegatronExpertArgs}); without them the
 *       nearest input runs NCCL's all-to-all;
 *   <li>packed documents ({@link Packing}): Megatron-LM's export writes the dataloader's
 *       per-document masking and torchtitan main masks by document always ({@code
 *       models/common/config_utils.py}, {@code get_attention_config}: "Language models always use
 *       block_causal masking"); the others do not state it, and their nearest input trains on
 *       whole sequences;
 *   <li>LoRA's adapters on frozen weights ({@link Lora}): torchtitan main's export writes its
 *       {@code LoRAConverter}; the others train every weight, and their nearest input is the
 *       full fine-tuning of the same model;
 *   <li>hybrid sharding ({@link io.meshplan.plan.ParallelConfig#shardGroup}): torchtitan's
 *       exports write its {@code data_parallel_shard_degree} and {@code
 *       data_parallel_replicate_degree}, Megatron-LM's its {@code
 *       --num-distributed-optimizer-instances}; the others' nearest input shards over the whole
 *       data-parallel group.
 * </ul>
 *
 * @param inner the framework's writer
 * @param label the framework's name, for messages
 * @param writesDispatchers whether the framework writes DeepEP and Hybrid-EP
 * @param writesPacking whether the framework masks attention by document
 * @param writesLora whether the framework trains LoRA adapters
 * @param writesHybrid whether the framework writes hybrid sharding as meshplan prices it
 */
record UnwrittenFeatures(FrameworkWriter inner, String label, boolean writesDispatchers,
    boolean writesPacking, boolean writesLora, boolean writesHybrid) implements FrameworkWriter {
  /** Validates the fields. */
  UnwrittenFeatures {
    Require.nonNull(inner, "writer");
    Require.nonNull(label, "label");
  }

  @Override
  public Optional<String> missing(ExportInput input) {
    ExpertDispatcher d = input.overlaps().dispatcher();
    if (!writesDispatchers && d.deduplicates()) {
      return Optional.of(label + " export writes the all-to-all token dispatcher only, not "
          + d.word() + " (export --to megatron writes it)");
    }
    if (!writesPacking && input.model().packing().packed()) {
      return Optional.of(label + " export does not mask attention by document (--mean-doc-len, "
          + "--packed-seqs); export --to megatron or --to torchtitan (main, not "
          + "--framework-version 0.2.2) does");
    }
    if (!writesLora && input.model().lora().on()) {
      return Optional.of(label + " export trains every weight: it writes no LoRA adapters "
          + "(--finetune lora); export --to torchtitan (main, not --framework-version 0.2.2) "
          + "does");
    }
    if (!writesHybrid && input.config().shardGroup() > 0) {
      return Optional.of(label + " export shards ZeRO state over the whole data-parallel group: "
          + "it writes no hybrid sharding (--shard-group); export --to torchtitan or --to "
          + "megatron does");
    }
    return inner.missing(input);
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ExportInput plain = writesDispatchers ? input : input.withOverlaps(input.overlaps()
        .withDispatcher(ExpertDispatcher.ALLTOALL));
    if (!writesPacking && plain.model().packing().packed()) {
      plain = plain.withModel(plain.model().withPacking(Packing.NONE));
    }
    if (!writesLora && plain.model().lora().on()) {
      plain = plain.withModel(plain.model().withLora(Lora.NONE));
    }
    if (!writesHybrid && plain.config().shardGroup() > 0) {
      plain = plain.withConfig(plain.config().withShardGroup(0));
    }
    return inner.missing(plain).isEmpty() ? Optional.of(plain) : inner.nearest(plain);
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    return inner.write(input);
  }
}

package io.meshplan.export;

import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.Lora;
import io.meshplan.model.Packing;

/**
 * Features of a training configuration that only some frameworks' exports write ({@link
 * ExportTarget} names the ones each writes; {@link UnwrittenFeatures} says the others): each
 * knows whether an input uses it, what a framework without it says, and the nearest input
 * without it.
 */
enum ExportFeature {
  /**
   * DeepEP and Hybrid-EP ({@link ExpertDispatcher#deduplicates}): only Megatron-LM's export
   * writes the flex dispatcher's backends ({@link MegatronExpertArgs}); without them the nearest
   * input runs NCCL's all-to-all.
   */
  FLEX_DISPATCHERS {
    @Override
    boolean usedBy(ExportInput in) {
      return in.overlaps().dispatcher().deduplicates();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export writes the all-to-all token dispatcher only, not "
          + in.overlaps().dispatcher().word() + " (export --to megatron writes it)";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withOverlaps(in.overlaps().withDispatcher(ExpertDispatcher.ALLTOALL));
    }
  },
  /**
   * Packed documents ({@link Packing}): Megatron-LM's export writes the dataloader's
   * per-document masking and torchtitan main masks by document always ({@code
   * models/common/config_utils.py}, {@code get_attention_config}: "Language models always use
   * block_causal masking"); without it the nearest input trains on whole sequences.
   */
  DOCUMENT_MASKING {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().packing().packed();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export does not mask attention by document (--mean-doc-len, "
          + "--packed-seqs); export --to megatron or --to torchtitan (main, not "
          + "--framework-version 0.2.2) does";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withPacking(Packing.NONE));
    }
  },
  /**
   * QLoRA's 4-bit base ({@link Lora#quantized}, {@link io.meshplan.model.Nf4}): no export writes
   * it. The base is bitsandbytes' {@code Linear4bit}, which the model loader makes
   * (transformers' {@code BitsAndBytesConfig}); Megatron-LM (d98e8a64) and torchtitan (b5bcd76)
   * have no bitsandbytes or NF4 layer, and accelerate's config file (16cb6eb8) has no field
   * for quantization: its {@code BnbQuantizationConfig} is an object of the training script.
   * Without it the nearest input is LoRA with the same adapters on a bf16 base.
   */
  QLORA {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().lora().quantized();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export writes no 4-bit base (--finetune qlora): QLoRA's NF4 weights "
          + "are bitsandbytes' Linear4bit, which the model loader makes, not a framework "
          + "setting; --finetune lora states the same adapters on a bf16 base";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withLora(in.model().lora().withBase(Lora.Base.TRAINING)));
    }
  },
  /**
   * Full recomputation of the first layers of each chunk only ({@link
   * io.meshplan.plan.ParallelConfig#recomputeLayers}): Megatron-LM's export writes it ({@code
   * --recompute-method block --recompute-num-layers N}); torchtitan's checkpointing wraps every
   * block or every N-th one, DeepSpeed's and accelerate's every layer, so without it the nearest
   * input recomputes every layer.
   */
  PARTIAL_RECOMPUTE {
    @Override
    boolean usedBy(ExportInput in) {
      return in.config().recomputeLayers() > 0;
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export recomputes every layer or none: it writes no recomputation of the "
          + "first " + in.config().recomputeLayers() + " layers of each stage alone "
          + "(--recompute-num-layers); export --to megatron writes it";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withConfig(in.config().withRecomputeLayers(0));
    }
  },
  /**
   * A frozen base stored in FP8 ({@link Lora#fp8Base}, {@code --fp8-param-gather}): no export
   * writes it with LoRA. torchtitan main, the one export that writes LoRA, converts linear layers
   * to float8 training (torchao) but keeps their weights in high precision; Megatron-LM's {@code
   * pretrain_gpt.py} has its {@code --fp8-param-gather} but trains every weight. Without it the
   * nearest input keeps the same adapters on a bf16 base.
   */
  FP8_BASE {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().lora().fp8Base() && in.model().lora().on();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export writes no FP8 base beside LoRA adapters (--fp8-param-gather): "
          + "without it the same adapters train on a bf16 base";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withLora(in.model().lora().withBase(Lora.Base.TRAINING)));
    }
  },
  /**
   * Trained weights kept in FP8 ({@link Lora#fp8Weights}, {@code --fp8-param-gather} in full
   * training): Megatron-LM's {@code --fp8-param-gather} ({@code megatron/training/arguments.py}
   * at d98e8a6), which only its export writes. torchtitan's float8 training (torchao) keeps
   * high-precision weights and gathers them in FP8 only under its own FSDP2 option, which
   * meshplan does not price; DeepSpeed, Accelerate and Alpa have no FP8 weights. Without it the
   * nearest input keeps the weights in bf16.
   */
  FP8_WEIGHTS {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().lora().fp8Weights();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export writes no FP8 weights (--fp8-param-gather): without it the "
          + "weights are kept and gathered in bf16 (export --to megatron writes it)";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withLora(in.model().lora().withBase(Lora.Base.TRAINING)));
    }
  },
  /**
   * SwiGLU inputs kept as FP8 copies ({@link io.meshplan.model.ModelSpec#fp8ActivationInput}):
   * no export writes it. Megatron-Core's {@code TransformerConfig.activation_func_fp8_input_store}
   * has no command-line argument in Megatron-LM ({@code megatron/training/arguments.py}, d98e8a6,
   * lists it among the fields "no CLI argument exists for"); NeMo and Megatron-Bridge set it in a
   * model config, which meshplan does not export; torchtitan, DeepSpeed and accelerate have no
   * such setting. Without it the nearest input keeps the inputs in the compute type, at the same
   * time and with more activation memory.
   */
  FP8_ACTIVATION_INPUT {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().fp8ActivationInput();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export cannot keep the SwiGLU inputs in FP8 "
          + "(--activation-func-fp8-input-store, Megatron-Core's activation_func_fp8_input_store,"
          + " which Megatron-LM's command line does not take): without it they are kept in the "
          + "compute type";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withFp8ActivationInput(false));
    }
  },
  /**
   * Block-scaled recipes ({@link io.meshplan.model.Fp8Scaling#blockScaled}): MXFP8 and NVFP4.
   * Megatron-LM's export writes them ({@code --fp8-recipe mxfp8}; {@code --fp4-format e2m1
   * --fp4-recipe nvfp4}); the others write per-tensor FP8 or none, so without them the nearest
   * input scales per tensor in the current step (its GEMMs priced by their own casts, {@code
   * cluster.Fp8Quantization}: on Blackwell about 2% slower than MXFP8's, and at 1.40x the 16-bit
   * speed rather than NVFP4's 1.98x).
   */
  BLOCK_SCALING {
    @Override
    boolean usedBy(ExportInput in) {
      return io.meshplan.model.Fp8Training.on(in.model().dtype())
          && in.model().fp8Scaling().blockScaled();
    }

    @Override
    String refusal(String label, ExportInput in) {
      String what = in.model().fp8Scaling() == io.meshplan.model.Fp8Scaling.NVFP4
          ? "NVFP4 training (--fp4-format e2m1 --fp4-recipe nvfp4)"
          : "MXFP8 block scaling (--fp8-recipe mxfp8)";
      return label + " export writes no " + what + "; export --to megatron writes it";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withFp8Scaling(io.meshplan.model.Fp8Scaling.TENSORWISE));
    }
  },
  /**
   * Bf16 optimizer state ({@link io.meshplan.model.OptimizerState#BF16}: the bf16 weights as
   * Adam's own, bf16 moments and gradients): no export writes it. Megatron-LM's precision-aware
   * optimizer ({@code --use-precision-aware-optimizer}, only with the distributed optimizer and
   * Transformer Engine's FusedAdam) takes {@code --exp-avg-dtype} and {@code --exp-avg-sq-dtype}
   * bf16 and {@code --main-grads-dtype} bf16, but its {@code --main-params-dtype} takes fp32 or
   * fp16 only ({@code megatron/training/arguments.py} at d98e8a6, the precision-aware optimizer's
   * arguments; {@code megatron/core/optimizer/__init__.py}): a master copy is always kept, which
   * is not this state. The other writers set their frameworks up with mixed-precision Adam (fp32
   * master weights and moments), which is what they write for every input. Without it the nearest
   * input keeps fp32 state.
   */
  BF16_OPTIMIZER_STATE {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().optimizerState() != io.meshplan.model.OptimizerState.FP32;
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export keeps an fp32 master copy: it cannot state bf16 optimizer "
          + "state (--optimizer-state bf16; Megatron-LM's --main-params-dtype takes fp32 or "
          + "fp16 only); --optimizer-state fp32 states the same job with mixed-precision Adam";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withOptimizerState(io.meshplan.model.OptimizerState.FP32));
    }
  },
  /**
   * LoRA's adapters on frozen weights ({@link Lora}): torchtitan main's export writes its {@code
   * LoRAConverter}; without it the nearest input is the full fine-tuning of the same model.
   */
  LORA {
    @Override
    boolean usedBy(ExportInput in) {
      return in.model().lora().on();
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export trains every weight: it writes no LoRA adapters "
          + "(--finetune lora); export --to torchtitan (main, not --framework-version 0.2.2) "
          + "does";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withModel(in.model().withLora(Lora.NONE));
    }
  },
  /**
   * Hybrid sharding ({@link io.meshplan.plan.ParallelConfig#shardGroup}): torchtitan's exports
   * write its {@code data_parallel_shard_degree} and {@code data_parallel_replicate_degree},
   * Megatron-LM's its {@code --num-distributed-optimizer-instances} (each writer checks the
   * replicas' cadence, {@link io.meshplan.model.Overlaps#hsdpStepReduce}); without it the
   * nearest input shards over the whole data-parallel group.
   */
  HYBRID_SHARDING {
    @Override
    boolean usedBy(ExportInput in) {
      return in.config().shardGroup() > 0;
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export shards ZeRO state over the whole data-parallel group: "
          + "it writes no hybrid sharding (--shard-group); export --to torchtitan or --to "
          + "megatron does";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withConfig(in.config().withShardGroup(0));
    }
  },
  /**
   * MaxText's remat policies ({@link io.meshplan.model.MaxTextRemat}) name the values a block
   * saves; no exported framework takes such a list: Megatron-LM and DeepSpeed recompute whole
   * layers or listed modules, torchtitan's per-op mode saves every other product, accelerate's
   * FSDP checkpoints whole layers. {@code full}, which saves the block's input alone, is what
   * their full recomputation saves, and is written as it ({@link Exporter}); the others are
   * refused. Without them the nearest input recomputes whole layers.
   */
  MAXTEXT_REMAT {
    @Override
    boolean usedBy(ExportInput in) {
      return in.config().recompute().maxText()
          && in.config().recompute() != io.meshplan.model.Recompute.MAXTEXT_FULL;
    }

    @Override
    String refusal(String label, ExportInput in) {
      return label + " export cannot state MaxText's remat policy (--recompute "
          + in.config().recompute().label() + "): the framework saves whole layers' inputs or "
          + "its own modules, not values named by MaxText's checkpoint names; only "
          + "maxtext:full is written (as full recomputation)";
    }

    @Override
    ExportInput without(ExportInput in) {
      return in.withConfig(in.config().withRecompute(io.meshplan.model.Recompute.FULL));
    }
  };

  /** Whether the input uses the feature. */
  abstract boolean usedBy(ExportInput in);

  /** What a framework without the feature says of an input that uses it. */
  abstract String refusal(String label, ExportInput in);

  /** The input without the feature. */
  abstract ExportInput without(ExportInput in);
}

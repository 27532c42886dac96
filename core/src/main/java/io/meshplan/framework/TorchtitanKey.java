package io.meshplan.framework;

/**
 * The keys of a torchtitan job TOML (its release v0.2.2, the last that reads TOML;
 * {@code torchtitan/config/job_config.py}, one dataclass per table) that meshplan writes ({@code
 * export --to torchtitan --framework-version 0.2.2}) or reads back with a run's log ({@code
 * calibrate --train --config}), named once: each is its table and its field.
 */
public enum TorchtitanKey {
  /** {@code [model] name}: the model's directory under {@code torchtitan/models/}. */
  MODEL_NAME("model", "name"),
  /** {@code [model] flavor}. */
  MODEL_FLAVOR("model", "flavor"),
  /** {@code [model] converters}: float8 training among them. */
  MODEL_CONVERTERS("model", "converters"),
  /** {@code [training] local_batch_size}: sequences per data-parallel rank and step. */
  LOCAL_BATCH_SIZE("training", "local_batch_size"),
  /** {@code [training] batch_size}: the older name of the local batch. */
  BATCH_SIZE("training", "batch_size"),
  /** {@code [training] seq_len}. */
  SEQ_LEN("training", "seq_len"),
  /** {@code [training] mixed_precision_param}. */
  MIXED_PRECISION_PARAM("training", "mixed_precision_param"),
  /** {@code [parallelism] tensor_parallel_degree}. */
  TENSOR_PARALLEL_DEGREE("parallelism", "tensor_parallel_degree"),
  /** {@code [parallelism] pipeline_parallel_degree}. */
  PIPELINE_PARALLEL_DEGREE("parallelism", "pipeline_parallel_degree"),
  /** {@code [parallelism] pipeline_parallel_microbatch_size}. */
  PIPELINE_PARALLEL_MICROBATCH_SIZE("parallelism", "pipeline_parallel_microbatch_size"),
  /** {@code [parallelism] context_parallel_degree}. */
  CONTEXT_PARALLEL_DEGREE("parallelism", "context_parallel_degree"),
  /** {@code [parallelism] context_parallel_rotate_method}. */
  CONTEXT_PARALLEL_ROTATE_METHOD("parallelism", "context_parallel_rotate_method"),
  /** {@code [parallelism] data_parallel_shard_degree}. */
  DATA_PARALLEL_SHARD_DEGREE("parallelism", "data_parallel_shard_degree"),
  /** {@code [parallelism] data_parallel_replicate_degree}. */
  DATA_PARALLEL_REPLICATE_DEGREE("parallelism", "data_parallel_replicate_degree"),
  /** {@code [parallelism] fsdp_reshard_after_forward}. */
  FSDP_RESHARD_AFTER_FORWARD("parallelism", "fsdp_reshard_after_forward"),
  /** {@code [parallelism] expert_parallel_degree}. */
  EXPERT_PARALLEL_DEGREE("parallelism", "expert_parallel_degree"),
  /** {@code [parallelism] expert_tensor_parallel_degree}. */
  EXPERT_TENSOR_PARALLEL_DEGREE("parallelism", "expert_tensor_parallel_degree"),
  /** {@code [activation_checkpoint] mode}. */
  ACTIVATION_CHECKPOINT_MODE("activation_checkpoint", "mode"),
  /** {@code [activation_checkpoint] selective_ac_option}. */
  SELECTIVE_AC_OPTION("activation_checkpoint", "selective_ac_option"),
  /** {@code [compile] enable}. */
  COMPILE_ENABLE("compile", "enable"),
  /** {@code [compile] components}. */
  COMPILE_COMPONENTS("compile", "components");

  private final String table;
  private final String key;

  TorchtitanKey(String table, String key) {
    this.table = table;
    this.key = key;
  }

  /**
   * The table the key sits in.
   *
   * @return for example {@code parallelism}
   */
  public String table() {
    return table;
  }

  /**
   * The key within its table.
   *
   * @return for example {@code tensor_parallel_degree}
   */
  public String key() {
    return key;
  }

  /**
   * The dotted path of the key, as calibrate's TOML reader names it.
   *
   * @return for example {@code parallelism.tensor_parallel_degree}
   */
  public String path() {
    return table + "." + key;
  }
}

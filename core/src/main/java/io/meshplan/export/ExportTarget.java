package io.meshplan.export;

import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The training frameworks whose configuration {@link Exporter} writes, registered once: each
 * target's name on the command line, its output file and its writer. A new target is one {@link
 * FrameworkWriter} and one line here; {@code export --to} and {@code plan --for} list and parse
 * the targets from this enum.
 */
public enum ExportTarget {
  /** Megatron-LM command-line arguments, as a bash array to source. */
  MEGATRON("megatron", "megatron-args.sh", MegatronArgs::new, ExportFeature.FLEX_DISPATCHERS,
      ExportFeature.DOCUMENT_MASKING, ExportFeature.HYBRID_SHARDING,
      ExportFeature.BLOCK_SCALING, ExportFeature.PARTIAL_RECOMPUTE, ExportFeature.FP8_WEIGHTS),
  /**
   * A torchtitan config in its main branch's form: a Python module whose function returns a
   * {@code Trainer.Config} ({@link TorchtitanPython}); {@code --to torchtitan}'s default.
   */
  TORCHTITAN("torchtitan", "meshplan_torchtitan.py", TorchtitanPython::new,
      ExportFeature.DOCUMENT_MASKING, ExportFeature.LORA, ExportFeature.HYBRID_SHARDING),
  /**
   * A torchtitan job TOML for its release v0.2.2, the last that reads TOML ({@link
   * TorchtitanToml}).
   */
  TORCHTITAN_V022("torchtitan", "torchtitan.toml", TorchtitanToml::new,
      ExportFeature.HYBRID_SHARDING),
  /**
   * A bash file to source: the DeepSpeed configuration JSON, written as a heredoc, and the
   * Megatron-DeepSpeed arguments that give DeepSpeed its tensor and pipeline sizes.
   */
  DEEPSPEED("deepspeed", "ds_launch.sh", DeepSpeedConfig::new),
  ACCELERATE("accelerate", "accelerate_fsdp.yaml", AccelerateFsdp::new),
  /**
   * An Alpa training program on Ray ({@link AlpaPipeshard}): a plan's stages as they were planned,
   * each on its own submesh with its own setting.
   */
  ALPA("alpa", "meshplan_alpa.py", AlpaPipeshard::new);

  private final String label;
  private final String fileName;
  private final Supplier<FrameworkWriter> writer;
  private final java.util.Set<ExportFeature> written;

  /**
   * A target.
   *
   * @param label the name on the command line
   * @param fileName the output's conventional name
   * @param writer its writer
   * @param written the features only some exports write that this one writes ({@link
   *     ExportFeature}): Megatron-LM's flex dispatchers; document masking by Megatron-LM's
   *     dataloader and torchtitan main; LoRA by torchtitan main's {@code LoRAConverter}
   *     (Megatron-LM's {@code pretrain_gpt.py} trains every weight); hybrid sharding by
   *     torchtitan's FSDP2 and Megatron-FSDP
   */
  ExportTarget(String label, String fileName, Supplier<FrameworkWriter> writer,
      ExportFeature... written) {
    this.label = label;
    this.fileName = fileName;
    this.writer = writer;
    this.written = java.util.Set.of(written);
  }

  /**
   * The target's writer.
   *
   * @return a new writer (writers hold no state), which says what of the target's flags it
   *     lacks ({@link UnwrittenFeatures})
   */
  public FrameworkWriter writer() {
    FrameworkWriter w = writer.get();
    return written.size() == ExportFeature.values().length ? w
        : new UnwrittenFeatures(w, label, written);
  }

  /**
   * The name used on the command line.
   *
   * @return for example {@code megatron}
   */
  public String label() {
    return label;
  }

  /**
   * The conventional file name of the output.
   *
   * @return for example {@code ds_launch.sh}
   */
  public String fileName() {
    return fileName;
  }

  /**
   * Parses a target name; {@code torchtitan} is its current form ({@link #TORCHTITAN}).
   *
   * @param text {@code megatron}, {@code torchtitan}, {@code deepspeed} or {@code alpa} (any
   *     case)
   * @return the target
   * @throws InputException listing the valid names
   */
  public static ExportTarget parse(String text) {
    for (ExportTarget t : values()) {
      if (t.label.equals(text == null ? "" : Words.trimmed(text).toLowerCase(Locale.ROOT))) {
        return t;
      }
    }
    throw new InputException("export target '" + text + "' is unknown; use " + String.join(
        ", ", java.util.Arrays.stream(values()).map(ExportTarget::label).distinct().toList()));
  }
}

package io.meshplan.cli;

import io.meshplan.util.InputException;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The command line's words for what library messages name: the library says "tensor-parallel
 * size 3", the command line "--tp 3". A command that hands its flags to a library call wraps the
 * call here, so the user reads the flag they typed.
 */
final class FlagWords {
  /** The fields of a model spec ({@link io.meshplan.model.ModelSpec}). */
  static final Map<String, String> MODEL = Map.of("layers", "--layers", "hidden size", "--hidden",
      "attention heads", "--heads", "key/value heads", "--kv-heads", "feed-forward size", "--ffn",
      "vocabulary", "--vocab", "sequence length", "--seq", "batch", "--batch", "LoRA rank",
      "--lora-rank", "LoRA target", "--lora-targets");

  /** The fields of a Megatron-LM configuration ({@link io.meshplan.plan.ParallelConfig}). */
  static final Map<String, String> PARALLEL = Map.ofEntries(
      Map.entry("tensor-parallel size", "--tp"), Map.entry("pipeline-parallel size", "--pp"),
      Map.entry("data-parallel size", "--dp"), Map.entry("virtual stages", "--vpp"),
      Map.entry("micro batch", "--micro-batch"), Map.entry("global batch", "--global-batch"),
      Map.entry("sequence parallelism", "--sequence-parallel"),
      Map.entry("first-stage layers", "--first-stage-layers"),
      Map.entry("last-stage layers", "--last-stage-layers"),
      Map.entry("context-parallel size", "--cp"), Map.entry("expert-parallel size", "--ep"),
      Map.entry("expert tensor-parallel size", "--etp"), Map.entry("shard group", "--shard-group"));

  /** The refusal of {@link io.meshplan.cluster.FusedAttentionKernels#require}. */
  static final Map<String, String> ATTENTION = Map.of("^flash attention", "--attention flash",
      "use unfused attention", "use --attention unfused");

  /** The refusal of {@link io.meshplan.cluster.Fp8Gemms#require}. */
  static final Map<String, String> FP8 = Map.of("^fp8 training", "--dtype fp8",
      "use bf16, or a GPU", "use --dtype bf16, or a GPU", "use f16, or a GPU", "use --dtype f16, or a GPU");

  /** The refusal of {@link io.meshplan.cluster.GpuSpec#requireTraining}. */
  static final Map<String, String> PRECISION = Map.of("the training precision", "--dtype");

  /** The fields of a training job ({@link io.meshplan.planner.TrainingJob}). */
  static final Map<String, String> JOB = union(union(Map.of("the training precision", "--dtype",
      "the global batch", "--global-batch"), ATTENTION), FP8);

  /** A configuration to export ({@link io.meshplan.export.ExportInput}). */
  static final Map<String, String> EXPORT = union(union(union(PARALLEL, ATTENTION), FP8),
      PRECISION);

  /**
   * A training configuration bound to a model and a cluster ({@link
   * io.meshplan.plan.BoundConfig}): its layout's, job's and export's words, one map for every
   * command that binds one.
   */
  static final Map<String, String> CONFIG = union(EXPORT, JOB);

  /** A cluster string ({@link io.meshplan.cluster.ClusterSpec#parse}) at a message's start. */
  static final Map<String, String> CLUSTER = Map.of("^cluster '", "--cluster '");

  /** A sysfs tree ({@link io.meshplan.doctor.SysfsReader}) at a message's start. */
  static final Map<String, String> SYSFS = Map.of("^sysfs root ", "--sysfs-root ");

  /** A doctor report read as a launch's fabric ({@link io.meshplan.deploy.DoctorFabric}). */
  static final Map<String, String> FABRIC = Map.of("for the launch instead",
      "with --env NAME=VALUE instead");

  private FlagWords() {}

  private static Map<String, String> union(Map<String, String> a, Map<String, String> b) {
    Map<String, String> both = new java.util.HashMap<>(a);
    both.putAll(b);
    return Map.copyOf(both);
  }

  /**
   * Runs a library call on the flags' values; a refusal comes back in the flags' words.
   *
   * @param words library phrase to flag ({@code ^} anchors a phrase at the message's start)
   * @param call the call
   * @param <T> the result
   * @return the call's result
   * @throws InputException the call's refusal, reworded
   */
  static <T> T call(Map<String, String> words, Supplier<T> call) {
    try {
      return call.get();
    } catch (InputException e) {
      throw new InputException(reword(e.getMessage(), words), e);
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw new InputException(reword(e.getMessage(), words));
    }
  }

  /**
   * Runs a library check on the flags' values; a refusal comes back in the flags' words.
   *
   * @param words library phrase to flag
   * @param check the check
   */
  static void check(Map<String, String> words, Runnable check) {
    call(words, () -> {
      check.run();
      return null;
    });
  }

  /**
   * A message with every phrase replaced by its flag, longest phrase first; a phrase counts only
   * as whole words.
   *
   * @param message the library's message
   * @param words library phrase to flag
   * @return the message in the flags' words
   */
  static String reword(String message, Map<String, String> words) {
    if (message == null) {
      return null;
    }
    Map<String, String> ordered = new LinkedHashMap<>();
    words.entrySet().stream()
        .sorted(Comparator.comparingInt((Map.Entry<String, String> e) -> -e.getKey().length())
            .thenComparing(Map.Entry::getKey))
        .forEach(e -> ordered.put(e.getKey(), e.getValue()));
    String out = message;
    for (Map.Entry<String, String> e : ordered.entrySet()) {
      String key = e.getKey();
      String regex = key.startsWith("^") ? "^" + Pattern.quote(key.substring(1))
          : "(?<![\\w/-])" + Pattern.quote(key) + "(?![\\w/-])";
      out = out.replaceAll(regex, Matcher.quoteReplacement(e.getValue()));
      // A library phrase glossed with its own flag reads the flag once: "sequence parallelism
      // (--sequence-parallel)" becomes "--sequence-parallel", not the flag twice.
      out = out.replace(e.getValue() + " (" + e.getValue() + ")", e.getValue());
    }
    return out;
  }
}

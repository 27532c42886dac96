package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * Turns a plan, or a Megatron-style configuration, into one framework's configuration file. A
 * configuration the framework cannot express is never approximated: the result names what is
 * missing and carries the nearest configuration the framework can express.
 */
public final class Exporter {
  /** Creates the exporter; it holds no state. */
  public Exporter() {}

  /**
   * The writer of a target.
   *
   * @param target the framework
   * @return its writer
   */
  public static FrameworkWriter writer(ExportTarget target) {
    return target.writer();
  }

  /**
   * Exports a configuration given directly.
   *
   * @param target the framework
   * @param input the model, cluster and configuration
   * @return the file content, or what the framework lacks with the nearest configuration it has
   */
  public ExportResult export(ExportTarget target, ExportInput input) {
    Require.nonNull(target, "target");
    Require.nonNull(input, "input");
    if (input.config().recompute() == io.meshplan.model.Recompute.MAXTEXT_FULL) {
      // MaxText's full saves each block's input alone, as the frameworks' full recomputation.
      input = input.withConfig(input.config().withRecompute(io.meshplan.model.Recompute.FULL));
    }
    Optional<ExportResult> details = unwritten(target, input.model());
    if (details.isPresent()) {
      return details.get();
    }
    FrameworkWriter w = writer(target);
    Optional<String> missing = w.missing(input);
    if (missing.isEmpty()) {
      return new ExportResult.Exported(input, w.write(input));
    }
    return new ExportResult.NotExpressible(missing.get(), nearestOf(w, input));
  }

  /**
   * Exports a plan. A plan whose stages share one logical mesh and one layer count is the
   * Megatron-style configuration {@link PipelinePlan#asParallelConfig}; any other plan is not
   * expressible, and its nearest uniform configuration comes from {@link NearestConfig}.
   *
   * @param target the framework
   * @param plan the plan
   * @param cluster the cluster it runs on
   * @return the file content, or what the framework lacks with the nearest configuration it has
   * @throws InfeasibleException for the plan of an HLO module: the frameworks build their own
   *     models, and none of them is the module
   */
  public ExportResult export(ExportTarget target, PipelinePlan plan, ClusterSpec cluster) {
    Require.nonNull(plan, "plan");
    Require.nonNull(cluster, "cluster");
    if (plan.source() instanceof PlanSource.HloModule h) {
      throw new InfeasibleException(target.label() + " cannot run the plan of the XLA module "
          + h.module() + ": no framework model exists for an XLA module (run the module itself, "
          + "sharded as the plan says)");
    }
    if (plan.gpus() != cluster.gpuCount()) {
      throw new InputException("the plan uses " + plan.gpus() + " GPUs but the cluster "
          + cluster.toShortString() + " has " + cluster.gpuCount());
    }
    if (target == ExportTarget.ALPA) {
      return alpa(plan, cluster);
    }
    ModelSpec model = plan.model();
    Optional<ExportResult> details = unwritten(target, model);
    if (details.isPresent()) {
      return details.get();
    }
    FrameworkWriter w = writer(target);
    Optional<ParallelConfig> uniform = plan.asParallelConfig();
    Optional<String> why = plan.whyNotUniform();
    if (uniform.isPresent()) {
      try {
        return export(target, new ExportInput(model, cluster, uniform.get(), plan.attention(),
            plan.overlaps()));
      } catch (InputException e) {
        why = Optional.of("the plan's layout is not a valid Megatron-style configuration: "
            + e.getMessage());
      }
    }
    Optional<ExportInput> nearest = NearestConfig.of(plan, cluster)
        .map(c -> new ExportInput(model, cluster, c, plan.attention(), plan.overlaps()))
        .flatMap(in -> nearestOf(w, in));
    return new ExportResult.NotExpressible(why.orElseThrow(), nearest);
  }

  /**
   * Why a target cannot express a configuration, without looking for the nearest one it can.
   *
   * @param target the framework
   * @param input the model, cluster and configuration
   * @return one sentence, or empty when the target writes the input exactly
   */
  public static Optional<String> missing(ExportTarget target, ExportInput input) {
    Optional<ExportResult> details = unwritten(target, input.model());
    if (details.isPresent()) {
      return Optional.of(((ExportResult.NotExpressible) details.get()).missing());
    }
    return writer(target).missing(input);
  }

  /**
   * Why a target cannot train a model in any layout: the model details its writer does not
   * express, and for Alpa also the precision, attention and overlaps.
   *
   * @param target the framework
   * @param model the model in its training precision
   * @param attention how the attention core runs
   * @param overlaps what the plan overlaps and fuses
   * @return one sentence, or empty when some layout may do
   */
  public static Optional<String> missingJob(ExportTarget target, ModelSpec model,
      io.meshplan.model.Attention attention, io.meshplan.model.Overlaps overlaps) {
    if (target == ExportTarget.ALPA) {
      return AlpaPipeshard.missingJob(model, attention, overlaps);
    }
    return unwritten(target, model).map(r -> ((ExportResult.NotExpressible) r).missing());
  }

  /** Alpa runs a plan's stages as they are; what it cannot run it names, with no nearest. */
  private static ExportResult alpa(PipelinePlan plan, ClusterSpec cluster) {
    AlpaPipeshard w = new AlpaPipeshard();
    Optional<String> missing = w.missing(plan, cluster);
    if (missing.isPresent()) {
      return new ExportResult.NotExpressible(missing.get() + "; 'plan --for alpa' plans only"
          + " what Alpa runs", Optional.empty());
    }
    return new ExportResult.PlanExported(w.write(plan, cluster));
  }

  /**
   * A model with details the writers do not express (the Hugging Face families' q/k norms, QKV
   * biases, GeGLU, experts, ...) has no exact file and no nearest one: the framework would build
   * another model. Megatron-LM export also writes experts, head sizes, per-head q/k norms, latent
   * attention and multi-token prediction ({@link MegatronExpertArgs#unwritten}); torchtitan main
   * export writes the models of its Qwen3 mixture-of-experts flavors ({@link TorchtitanQwen3Moe})
   * and of its DeepSeek-V3 flavor ({@link TorchtitanDeepseekV3}).
   */
  private static Optional<ExportResult> unwritten(ExportTarget target, ModelSpec model) {
    Optional<ExportResult> details = unwrittenDetails(target, model);
    if (details.isPresent()) {
      return details;
    }
    // The model's numbers and window, which Megatron-LM and Megatron-DeepSpeed state or lack
    // (torchtitan's flavors check theirs in its writers).
    Optional<String> fields = switch (target) {
      case MEGATRON -> MegatronModelArgs.missing(model);
      case DEEPSPEED -> MegatronDeepSpeedArgs.missingModel(model);
      // torchtitan builds only its flavors' models, whatever the layout.
      case TORCHTITAN -> TorchtitanPython.missingModel(model);
      case TORCHTITAN_V022 -> TorchtitanToml.missingModel(model);
      default -> Optional.empty();
    };
    return fields.map(f -> new ExportResult.NotExpressible(f, Optional.empty()));
  }

  /** The layer details the target's writer does not write, as a refusal. */
  private static Optional<ExportResult> unwrittenDetails(ExportTarget target, ModelSpec model) {
    boolean megatron = target == ExportTarget.MEGATRON;
    boolean qwen = TorchtitanQwen3Moe.flavor(model).isPresent();
    boolean deepseek = TorchtitanDeepseekV3.matches(model);
    if (target == ExportTarget.TORCHTITAN && (qwen || deepseek)) {
      return Optional.empty();
    }
    java.util.List<String> details = megatron ? MegatronExpertArgs.unwritten(model)
        : model.arch().beyondLlama();
    if (details.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new ExportResult.NotExpressible(target.label() + " export writes "
        + "LLaMA- and GPT-style models" + (megatron
        ? " and Mixtral-, Qwen3-MoE- and DeepSeek-V3-style experts"
        : target == ExportTarget.TORCHTITAN
            ? " and torchtitan's Qwen3-MoE and DeepSeek-V3 flavors" : "")
        + "; " + model.name() + " has " + String.join(", ", details)
        + ", which meshplan does not write" + nearestMoe(target, model, qwen ? "Qwen3" : deepseek ? "DeepSeek-V3" : ""),
        Optional.empty()));
  }

  /**
   * Where a torchtitan user finds experts: its main branch's Qwen3 MoE and DeepSeek-V3 flavors,
   * which meshplan writes for main only ({@link TorchtitanQwen3Moe}, {@link
   * TorchtitanDeepseekV3}); torchtitan's other mixture-of-experts models (main at b5bcd76, {@code
   * torchtitan/models/}) are not written, and it has no Mixtral.
   *
   * @param flavor the family of the main flavor the model is, empty when none
   */
  private static String nearestMoe(ExportTarget target, ModelSpec model, String flavor) {
    boolean torchtitan = target == ExportTarget.TORCHTITAN || target
        == ExportTarget.TORCHTITAN_V022;
    if (!torchtitan || !model.arch().moe().routed()) {
      return "";
    }
    if (!flavor.isEmpty()) {
      return " for torchtitan " + TorchtitanV022.VERSION + "; its export for torchtitan's main"
          + " branch writes this " + flavor + " flavor";
    }
    return "; torchtitan's other mixture-of-experts models (gpt_oss, kimi_k2_7)"
        + " are not written by meshplan, and torchtitan has no Mixtral model"
        + (MegatronExpertArgs.unwritten(model).isEmpty()
            ? "; its Megatron-LM export writes this model" : "");
  }

  private static Optional<ExportInput> nearestOf(FrameworkWriter w, ExportInput input) {
    if (w.missing(input).isEmpty()) {
      return Optional.of(input);
    }
    return w.nearest(input).filter(n -> w.missing(n).isEmpty());
  }
}

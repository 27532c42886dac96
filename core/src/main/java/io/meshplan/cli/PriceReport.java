package io.meshplan.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.calibrate.ComputeScale;
import io.meshplan.cluster.GpuSpec;
import io.meshplan.planner.Pricing;
import io.meshplan.sim.PredictionBand;
import java.util.Optional;

/**
 * What {@code plan}, {@code simulate} and {@code export} say of their prices: one line of text
 * ({@link Pricing#describe}), the 90% band of the prediction where the prices have one, and the
 * same in JSON.
 */
final class PriceReport {

  private PriceReport() {}

  /**
   * The band of a GPU's predictions under some prices: the fitted scale's error band.
   *
   * @param pricing the prices
   * @param gpu the GPU
   * @return the band, or empty at kernel-level prices or where the fit has none
   */
  static Optional<PredictionBand> band(Pricing pricing, GpuSpec gpu) {
    return pricing.fittedCompute(gpu).flatMap(ComputeScale::errorBand)
        .map(b -> new PredictionBand(b.low(), b.high()));
  }

  /**
   * What a model trains, for the text after the prices line: LoRA's adapters and their
   * trainable parameters against the frozen ones.
   *
   * @param m the model
   * @return the line, empty when every weight is trained
   */
  static Optional<String> finetuneLine(io.meshplan.model.ModelSpec m) {
    if (!m.lora().on()) {
      return Optional.empty();
    }
    long trainable = m.trainableParameterCount();
    long all = Math.addExact(m.parameterCount(), trainable);
    return Optional.of(String.format(java.util.Locale.ROOT, "fine-tuning: %s%n  %,d trainable "
        + "of %,d parameters (%.2f%%); the model's %,d weights frozen", m.lora().words(),
        trainable, all, 100.0 * trainable / all, m.parameterCount()));
  }

  /**
   * Adds the prices to a JSON object: {@code prices} (source, the line, the architecture's scale,
   * its folds and band), the {@code dtype} priced (with {@code fp8Recipe} under FP8 training),
   * and {@code iterationSecondsBand} where there is a band.
   *
   * @param json the JSON text of an object
   * @param pricing the prices
   * @param gpu the GPU priced
   * @param dtype the training precision priced, e.g. {@code bf16}
   * @param iterationSeconds the predicted iteration time
   * @return the JSON text, ending in a newline
   */
  static String json(String json, Pricing pricing, GpuSpec gpu, String dtype,
      double iterationSeconds) {
    return json(json, pricing, gpu, dtype, iterationSeconds, Optional.empty());
  }

  /**
   * As {@link #json(String, Pricing, GpuSpec, String, double)}, naming the attention priced: a
   * fused kernel (the one named, else the architecture's default) or {@code unfused}.
   *
   * @param json the JSON text of an object
   * @param pricing the prices
   * @param gpu the GPU priced
   * @param dtype the training precision priced
   * @param iterationSeconds the predicted iteration time
   * @param plan the plan priced, whose attention and kernel are named, or empty
   * @return the JSON text, ending in a newline
   */
  static String json(String json, Pricing pricing, GpuSpec gpu, String dtype,
      double iterationSeconds, Optional<io.meshplan.plan.PipelinePlan> plan) {
    return JsonEdit.edit(json, root -> {
      ObjectNode p = root.putObject("prices");
      p.put("source", pricing.source());
      p.put("line", pricing.describe(gpu));
      p.put("architecture", gpu.architecture().word());
      p.put("dtype", dtype);
      pricing.attentionKernel().ifPresent(k -> p.put("attentionKernel", k.word()));
      plan.filter(pl -> pl.hloModule().isEmpty()).ifPresent(pl -> p.put("attention",
          pl.attention() == io.meshplan.model.Attention.UNFUSED ? "unfused"
              : pl.attentionKernel().or(() -> io.meshplan.cluster.AttentionKernel.defaultFor(
                  gpu.architecture())).map(io.meshplan.cluster.AttentionKernel::word)
                  .orElse("unfused")));
      plan.filter(pl -> pl.hloModule().isEmpty()).ifPresent(pl -> root.set("finetune",
            io.meshplan.plan.PlanJson.finetuneSummary(pl.model())));
      // FP8 training is priced by its recipe's measured GEMMs with their casts.
      plan.filter(pl -> pl.hloModule().isEmpty()
          && io.meshplan.model.Fp8Training.on(pl.model().dtype()))
          .ifPresent(pl -> p.put("fp8Recipe", pl.model().fp8Scaling().word()));
      p.put("computeScale", pricing.computeScale(gpu));
      pricing.fittedCompute(gpu).ifPresent(c -> {
        p.put("kernelLevel", c.kernelLevel());
        p.put("runs", c.runs());
        c.folds().forEach(p.putArray("folds")::add);
        c.errorBand().ifPresent(b -> p.putObject("band").put("low", b.low())
            .put("high", b.high()).put("residuals", b.residuals()).put("basis", b.basis()));
      });
      // Fallback plans are priced alike: each carries the same prices for simulate --plan.
      for (com.fasterxml.jackson.databind.JsonNode f : root.path("fallbacks")) {
        if (f.path("plan").isObject()) {
          ((ObjectNode) f.get("plan")).set("prices", p.deepCopy());
        }
      }
      band(pricing, gpu).ifPresent(b -> {
        double[] s = b.seconds(iterationSeconds);
        root.putArray("iterationSecondsBand").add(s[0]).add(s[1]);
        if (root.has("tokensPerSecond")) {
          double tps = root.get("tokensPerSecond").asDouble();
          root.putArray("tokensPerSecondBand").add(tps / b.high()).add(tps / b.low());
        }
      });
    });
  }
}

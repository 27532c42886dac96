package io.meshplan.export;

import io.meshplan.model.ModelSpec;
import io.meshplan.model.Numerics;
import io.meshplan.model.RopeScaling;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The RoPE, norm and dropout numbers of torchtitan's flavors, and how a file gives a flavor a
 * model's own ({@link Numerics}). torchtitan builds every flavor without dropout.
 *
 * <ul>
 *   <li>llama3 8B, 70B, 405B: base 500,000 with Llama 3.1's scaling (factor 8, low 1, high 4,
 *       original 8192) and RMSNorm epsilon 1e-5, in v0.2.2 ({@code
 *       models/llama3/__init__.py:51-98}, {@code model/args.py:19-37}: {@code RoPEScalingArgs},
 *       {@code norm_eps}) and on main ({@code models/llama3/__init__.py:236-365}: {@code
 *       ComplexRoPE.Config(theta=500000, scaling="llama")}, {@code RMSNorm.Config}'s default eps,
 *       {@code models/common/nn_modules.py:137-141}).
 *   <li>Qwen3 30B-A3B: base 1,000,000, 235B-A22B: base 5,000,000 (the Qwen3-235B-A22B-2507
 *       release's; Qwen/Qwen3-235B-A22B's {@code config.json} has 1,000,000), both unscaled with
 *       epsilon 1e-6 ({@code models/qwen3/__init__.py:65, 545-549, 586-590}).
 *   <li>DeepSeek-V3 671B: base 10,000 with YaRN (factor 40, original 4096, betas 32 and 1,
 *       mscale 1 in the softmax scale, rounded correction range) and {@code RMSNorm.Config}'s
 *       default epsilon 1e-5 ({@code models/deepseek_v3/__init__.py:575-584}); DeepSeek-V3's
 *       {@code config.json} has 1e-6.
 * </ul>
 *
 * <p>v0.2.2's TOML names a flavor and nothing of its numbers, so a model must have them all. On
 * main the Python config can change them before the model is built: {@code
 * Configurable.Config.traverse} yields every {@code RoPE.Config} and {@code RMSNorm.Config} of
 * the model's config tree ({@code config/configurable.py:75-115}), as torchtitan's own float8
 * converter rewrites its {@code Linear.Config}s ({@code components/quantization/float8.py:156}),
 * and the file sets their {@code theta}, {@code scaling} (with the llama3 factors) and {@code
 * eps} ({@code models/common/rope.py:95-110}). A YaRN other than the flavor's is refused: each
 * model folds YaRN's attention factor into its own softmax scale ({@code rope.py:56-59}).
 */
final class TorchtitanNumerics {
  /** The llama3 flavors' numbers. */
  static final Numerics LLAMA3 = Numerics.rotary(500_000, 1e-5)
      .withScaling(new RopeScaling.Llama3(8, 1, 4, 8192));

  /** The Qwen3 30B-A3B flavor's numbers. */
  static final Numerics QWEN3_30B = Numerics.rotary(1_000_000, 1e-6);

  /** The Qwen3 235B-A22B flavor's numbers. */
  static final Numerics QWEN3_235B = Numerics.rotary(5_000_000, 1e-6);

  /** The DeepSeek-V3 671B flavor's numbers. */
  static final Numerics DEEPSEEK_V3 = Numerics.rotary(10_000, 1e-5)
      .withScaling(new RopeScaling.Yarn(40, 4096, 32, 1, 1, 1, true));

  private TorchtitanNumerics() {}

  /**
   * What torchtitan cannot give a flavor of a model's numbers.
   *
   * @param m the model
   * @param flavor the flavor's numbers
   * @param flavorName the flavor in words, for example {@code llama3 flavor 70B}
   * @param main whether the file is main's Python config (which can change the RoPE and the
   *     norms' epsilon) rather than v0.2.2's TOML
   * @return one sentence naming what differs, or empty
   */
  static Optional<String> missing(ModelSpec m, Numerics flavor, String flavorName, boolean main) {
    Numerics n = m.arch().numerics();
    String who = "; " + m.name() + " has ";
    io.meshplan.model.Architecture a = m.arch();
    if (a.tiedEmbeddings() || a.biases() || a.attn().window() > 0) {
      return Optional.of("torchtitan's " + flavorName + " has an untied LM head, no biases and no"
          + " sliding window" + who + (a.tiedEmbeddings() ? "tied embeddings"
          : a.biases() ? "biases" : "a " + a.attn().window() + "-token window"));
    }
    if (n.dropout()) {
      return Optional.of("torchtitan's " + flavorName + " trains without dropout" + who
          + "attention dropout " + RopeScaling.num(n.attentionDropout()) + " and hidden dropout "
          + RopeScaling.num(n.hiddenDropout()));
    }
    if (n.rotaryFraction() != 1 || n.parallelResidual()
        || !n.multipliers().equals(Numerics.Multipliers.NONE)) {
      return Optional.of("torchtitan's " + flavorName + " rotates whole heads in sequential"
          + " blocks without multipliers" + who + "other ones");
    }
    List<String> differs = differences(n, flavor);
    if (differs.isEmpty()) {
      return Optional.empty();
    }
    if (!main) {
      return Optional.of("torchtitan " + TorchtitanV022.VERSION + "'s " + flavorName
          + " has " + String.join(", ", differences(flavor, n)) + " and its TOML sets none of"
          + " them" + who + String.join(", ", differs) + " (torchtitan's main branch can set"
          + " them: --framework-version main)");
    }
    RopeScaling s = n.ropeScaling();
    if (!s.equals(flavor.ropeScaling()) && !(s instanceof RopeScaling.None)
        && !(s instanceof RopeScaling.Llama3)) {
      return Optional.of("torchtitan's RoPE.Config scales by llama3 or by the flavor's own YaRN"
          + " (models/common/rope.py:95-110)" + who + "RoPE scaling " + s.words());
    }
    return Optional.empty();
  }

  /** The fields of {@code n} that differ from {@code f}, in words. */
  private static List<String> differences(Numerics n, Numerics f) {
    List<String> out = new ArrayList<>();
    if (n.ropeTheta() != f.ropeTheta()) {
      out.add("RoPE base " + RopeScaling.num(n.ropeTheta()));
    }
    if (!n.ropeScaling().equals(f.ropeScaling())) {
      out.add("RoPE scaling " + n.ropeScaling().words());
    }
    if (n.normEps() != f.normEps()) {
      out.add("norm epsilon " + RopeScaling.num(n.normEps()));
    }
    return out;
  }

  /**
   * The Python lines, indented for the config function, that give the flavor a model's RoPE
   * and norm epsilon where they differ from the flavor's; empty when none does.
   *
   * @param m a model {@link #missing} accepts for main
   * @param flavor the flavor's numbers
   * @return the lines, each ending in a newline
   */
  static String overrides(ModelSpec m, Numerics flavor) {
    Numerics n = m.arch().numerics();
    StringBuilder sb = new StringBuilder();
    if (n.ropeTheta() != flavor.ropeTheta() || !n.ropeScaling().equals(flavor.ropeScaling())) {
      sb.append("    # The model's RoPE where the flavor's differs (models/common/rope.py).\n");
      sb.append("    for _, rope, _, _ in config.model_spec.model.traverse(RoPE.Config):\n");
      if (n.ropeTheta() != flavor.ropeTheta()) {
        sb.append("        rope.theta = ").append(python(n.ropeTheta())).append('\n');
      }
      if (!n.ropeScaling().equals(flavor.ropeScaling())) {
        if (n.ropeScaling() instanceof RopeScaling.Llama3 l) {
          sb.append("        rope.scaling = \"llama\"\n");
          sb.append("        rope.scaling_factor = ").append(python(l.factor())).append('\n');
          sb.append("        rope.low_freq_factor = ").append(python(l.lowFreq())).append('\n');
          sb.append("        rope.high_freq_factor = ").append(python(l.highFreq()))
              .append('\n');
          sb.append("        rope.original_max_position_embeddings = ")
              .append(l.originalMax()).append('\n');
        } else {
          sb.append("        rope.scaling = \"none\"\n");
        }
      }
    }
    if (n.normEps() != flavor.normEps()) {
      sb.append("    # The model's norm epsilon (the flavor's is ")
          .append(RopeScaling.num(flavor.normEps())).append(").\n");
      sb.append("    for _, norm, _, _ in config.model_spec.model.traverse(RMSNorm.Config):\n");
      sb.append("        norm.eps = ").append(python(n.normEps())).append('\n');
    }
    return sb.toString();
  }

  /** A float literal Python reads back exactly. */
  private static String python(double x) {
    String s = RopeScaling.num(x);
    return s.contains(".") || s.contains("e") ? s : s + ".0";
  }
}

package io.meshplan.plan;

import io.meshplan.model.Overlaps;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What a plan trains: a model preset (or a Hugging Face {@code config.json}) that meshplan builds
 * layer by layer, or the XLA HLO module of a whole training step. A plan of a module keeps the
 * module's path and SHA-256 so that {@code simulate --plan} prices the same module again, and
 * refuses another.
 */
public sealed interface PlanSource permits PlanSource.Preset, PlanSource.HloModule {
  /**
   * The layers the stages cover, numbered from 0.
   *
   * @return the layer count
   */
  int layers();

  /**
   * A name for titles: the model's or the module's.
   *
   * @return the name
   */
  String name();

  /**
   * What the plan trains, for titles: the model's name, or {@code HLO module} and the module's.
   *
   * @return e.g. {@code llama2-7b} or {@code HLO module jit_train_step}
   */
  default String title() {
    return this instanceof HloModule ? "HLO module " + name() : name();
  }

  /**
   * A model meshplan builds (a preset or a Hugging Face configuration).
   *
   * @param model the model, with the sequence length trained
   * @param attention how its attention core runs
   * @param overlaps what the framework the plan was priced for overlaps and fuses
   * @param kernel the fused attention kernel it was priced as, or null for the architecture's
   *     default (and for unfused attention)
   */
  record Preset(ModelSpec model, Attention attention, Overlaps overlaps,
      io.meshplan.cluster.AttentionKernel kernel) implements PlanSource {
    /** Checks the fields. */
    public Preset {
      Require.nonNull(model, "model");
      Require.nonNull(attention, "attention");
      Require.nonNull(overlaps, "overlaps");
      Require.that(kernel == null || attention == Attention.FLASH,
          "an attention kernel needs fused attention");
    }

    /**
     * A model priced with its architecture's default attention kernel.
     *
     * @param model the model
     * @param attention how its attention core runs
     * @param overlaps what the framework overlaps and fuses
     */
    public Preset(ModelSpec model, Attention attention, Overlaps overlaps) {
      this(model, attention, overlaps, null);
    }

    /**
     * A model priced with a named attention kernel, kept only where the attention is fused.
     *
     * @param model the model
     * @param attention how its attention core runs
     * @param overlaps what the framework overlaps and fuses
     * @param kernel the named kernel, or empty for the default
     * @return the source
     */
    public static Preset of(ModelSpec model, Attention attention, Overlaps overlaps,
        java.util.Optional<io.meshplan.cluster.AttentionKernel> kernel) {
      return new Preset(model, attention, overlaps,
          attention == Attention.FLASH ? kernel.orElse(null) : null);
    }

    /**
     * A model with the frameworks' default overlaps ({@link Overlaps#DEFAULTS}).
     *
     * @param model the model
     * @param attention how its attention core runs
     */
    public Preset(ModelSpec model, Attention attention) {
      this(model, attention, Overlaps.DEFAULTS);
    }

    /**
     * A model with unfused attention, as plans made before meshplan modelled fused attention.
     *
     * @param model the model
     */
    public Preset(ModelSpec model) {
      this(model, Attention.UNFUSED);
    }

    @Override
    public int layers() {
      return model.layers();
    }

    @Override
    public String name() {
      return model.name();
    }
  }

  /**
   * The HLO text of a training step (forward, backward and update); its batch is one
   * microbatch.
   *
   * @param module the module's name ({@code HloModule} line)
   * @param path the file as it was given, which {@code simulate --plan} reads again
   * @param sha256 the SHA-256 of the file's bytes, 64 lower-case hexadecimal digits
   * @param layerNames the module's layers in order, from their scopes
   */
  record HloModule(String module, String path, String sha256, List<String> layerNames)
      implements PlanSource {
    private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");

    /** Checks the fields and copies the list. */
    public HloModule {
      Require.nonNull(module, "module");
      Require.nonNull(path, "module path");
      Require.nonNull(sha256, "module SHA-256");
      Require.that(HEX64.matcher(sha256).matches(), "the module's SHA-256 must be 64 lower-case "
          + "hexadecimal digits");
      layerNames = List.copyOf(layerNames);
      Require.that(!layerNames.isEmpty(), "a module needs at least one layer");
    }

    @Override
    public int layers() {
      return layerNames.size();
    }

    @Override
    public String name() {
      return module;
    }
  }
}

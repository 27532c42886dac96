package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every export target is registered once, in {@link ExportTarget}, with its writer: {@link
 * Exporter#writer} is the registered one, each target has its own writer class and output file,
 * and the names {@code export --to} parses are the registry's.
 */
class ExportTargetRegistryTest {
  @Test
  void everyTargetHasItsOwnWriterAndFile() {
    Map<ExportTarget, Class<? extends FrameworkWriter>> expected = Map.of(
        ExportTarget.MEGATRON, MegatronArgs.class,
        ExportTarget.TORCHTITAN, TorchtitanPython.class,
        ExportTarget.TORCHTITAN_V022, TorchtitanToml.class,
        ExportTarget.DEEPSPEED, DeepSpeedConfig.class,
        ExportTarget.ALPA, AlpaPipeshard.class);
    for (ExportTarget t : ExportTarget.values()) {
      assertThat(Exporter.writer(t)).as(t.name()).isInstanceOf(t.writer().getClass());
      // Every writer lacks one of the features some other has: Megatron-LM's LoRA, the
      // others' DeepEP and Hybrid-EP dispatchers.
      assertThat(t.writer()).as(t.name()).isInstanceOf(UnwrittenFeatures.class);
      if (expected.containsKey(t)) {
        assertThat(own(t)).as(t.name()).isExactlyInstanceOf(expected.get(t));
      }
    }
    List<ExportTarget> all = Arrays.asList(ExportTarget.values());
    assertThat(all.stream().map(t -> own(t).getClass()).distinct()).hasSameSizeAs(all);
    assertThat(all.stream().map(ExportTarget::fileName).distinct()).hasSameSizeAs(all);
    assertThat(all).containsAll(expected.keySet());
  }

  /** The target's own writer, inside the all-to-all wrapper. */
  private static FrameworkWriter own(ExportTarget t) {
    FrameworkWriter w = t.writer();
    return w instanceof UnwrittenFeatures a ? a.inner() : w;
  }

  @Test
  void everyLabelParsesToARegisteredTarget() {
    for (ExportTarget t : ExportTarget.values()) {
      ExportTarget parsed = ExportTarget.parse(t.label().toUpperCase(java.util.Locale.ROOT));
      assertThat(parsed.label()).isEqualTo(t.label());
    }
    // torchtitan's two forms share one name; the current one is the default.
    assertThat(ExportTarget.parse("torchtitan")).isEqualTo(ExportTarget.TORCHTITAN);
  }
}

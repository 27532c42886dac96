package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.Lora;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * torchtitan main's LoRA, restated from pytorch/torchtitan at commit
 * b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (2026-08-21), against every LoRA export:
 *
 * <ul>
 *   <li>{@code torchtitan/components/lora.py}: {@code LoRAConverter.Config} has {@code rank:
 *       int} (refused unless positive, {@code __init__}), {@code alpha: float} and {@code
 *       target_modules: list[str] | None}; a target is matched against the last segment of each
 *       {@code Linear.Config}'s path; each adapted linear gains {@code lora_a} ({@code
 *       in_features x rank}) and {@code lora_b} ({@code rank x out_features}), and every other
 *       parameter is frozen;
 *   <li>{@code torchtitan/models/utils.py} ({@code validate_converter_order}): quantization
 *       converters ({@code Float8LinearConverter}) come before {@code LoRAConverter};
 *   <li>{@code torchtitan/models/llama3/__init__.py} ({@code _8b}, {@code _70b}, {@code _405b}:
 *       {@code fuse_qkv=True}) and {@code models/common/attention.py} ({@code FusedQKVLinear}:
 *       one {@code wqkv} of {@code dim x (n_heads + 2 n_kv_heads) head_dim}) and {@code
 *       models/common/config_utils.py} ({@code make_ffn_config}: {@code w1}, {@code w3} of
 *       {@code dim x hidden_dim}, {@code w2} of {@code hidden_dim x dim}): the block's linear
 *       layers are {@code wqkv}, {@code wo}, {@code w1}, {@code w2}, {@code w3};
 * </ul>
 *
 * <p>so that the adapters torchtitan builds from the written targets hold exactly the trainable
 * parameters meshplan priced.
 */
class TorchtitanLoraConformanceTest {
  private static final Pattern CONVERTER = Pattern.compile(
      "LoRAConverter\\.Config\\(\\s*rank=(\\d+),\\s*alpha=([0-9.Ee+-]+),\\s*"
      + "target_modules=\\[([^\\]]*)\\],\\s*\\)");

  /** The block's linear layers of a llama3 flavor: {in, out} by torchtitan's name. */
  private static Map<String, long[]> linears(ModelSpec m) {
    long dim = m.hidden();
    long headDim = dim / m.heads();
    long hidden = m.ffn();
    return Map.of("wqkv", new long[] {dim, (m.heads() + 2L * m.kvHeads()) * headDim},
        "wo", new long[] {dim, dim}, "w1", new long[] {dim, hidden},
        "w3", new long[] {dim, hidden}, "w2", new long[] {hidden, dim});
  }

  @Test
  void everyLoraExportBuildsTheAdaptersMeshplanPriced() throws Exception {
    Random rnd = new Random(7);
    List<String> words = List.of("linear_qkv", "o_proj", "gate_proj", "up_proj", "down_proj");
    int checked = 0;
    for (String preset : List.of("llama3.1-8b", "llama3.1-70b")) {
      for (int c = 0; c < 6; c++) {
        List<String> picked = new ArrayList<>();
        for (String w : words) {
          if (rnd.nextBoolean()) {
            picked.add(w);
          }
        }
        if (picked.isEmpty()) {
          picked.add("linear_qkv");
        }
        int rank = 1 << rnd.nextInt(8);
        boolean fp8 = rnd.nextBoolean();
        ModelSpec base = Presets.get(preset);
        ModelSpec m = (fp8 ? base.withTraining(base.batch(), Fp8Training.RECIPE) : base)
            .withLora(Lora.of(rank, 2.0 * rank, String.join(",", picked), true));
        int gpus = preset.endsWith("8b") ? 8 : 32;
        ExportInput in = new ExportInput(m, ClusterSpec.parse(gpus / 8 + "x8:h100-80gb"),
            new ParallelConfig(gpus > 8 ? 8 : 1, 1, gpus > 8 ? gpus / 8 : 8, 1, 1, 64,
                Recompute.FULL, gpus > 8, gpus > 8 ? 3 : 0), Attention.FLASH, Overlaps.DEFAULTS,
            false);
        ExportResult r = new Exporter().export(ExportTarget.TORCHTITAN, in);
        assertThat(r).as(picked.toString()).isInstanceOf(ExportResult.Exported.class);
        String text = ((ExportResult.Exported) r).text();
        TorchtitanMainConformanceTest.pythonParses(text);
        Matcher mm = CONVERTER.matcher(text);
        assertThat(mm.find()).as(text).isTrue();
        assertThat(Integer.parseInt(mm.group(1))).isEqualTo(rank).isPositive();
        assertThat(Double.parseDouble(mm.group(2))).isEqualTo(2.0 * rank);
        if (fp8) {
          assertThat(text.indexOf("Float8LinearConverter.Config(")).isPositive()
              .isLessThan(text.indexOf("LoRAConverter.Config("));
        }
        Map<String, long[]> linears = linears(m);
        long built = 0;
        for (String t : mm.group(3).split(",")) {
          String name = t.strip().replace("\"", "");
          assertThat(linears).containsKey(name);
          long[] io = linears.get(name);
          built += rank * (io[0] + io[1]);
        }
        assertThat(built * m.layers()).as(picked.toString())
            .isEqualTo(m.trainableParameterCount());
        checked++;
      }
    }
    assertThat(checked).isEqualTo(12);
  }

  @Test
  void adaptersTorchtitanCannotBuildAreRefusedWithTheirNearestForm() {
    ModelSpec m = Presets.get("llama3.1-8b").withLora(Lora.of(16, 32, "q_proj,v_proj,"
        + "linear_fc1", true));
    ExportInput in = new ExportInput(m, ClusterSpec.parse("1x8:h100-80gb"),
        new ParallelConfig(1, 1, 8, 1, 1, 64, Recompute.NONE, false, 0), Attention.FLASH,
        Overlaps.DEFAULTS, false);
    ExportResult.NotExpressible n = (ExportResult.NotExpressible) new Exporter().export(
        ExportTarget.TORCHTITAN, in);
    assertThat(n.missing()).contains("fuse the query, key and value projections");
    assertThat(n.nearest().orElseThrow().model().lora().targets())
        .isEqualTo("linear_qkv,gate_proj,up_proj");
    // The other frameworks train every weight; their nearest input is full fine-tuning.
    ExportResult.NotExpressible d = (ExportResult.NotExpressible) new Exporter().export(
        ExportTarget.MEGATRON, in);
    assertThat(d.missing()).contains("trains every weight");
    assertThat(d.nearest().orElseThrow().model().lora().on()).isFalse();
    assertThat(DType.BF16).isEqualTo(m.dtype());
  }
}

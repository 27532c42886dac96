package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.HfConfigReader;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Each export's model fields against the model's own {@code config.json}, field by field (issue
 * 36: a Megatron-LM file that left out {@code --rotary-base} trained LLaMA 3 at base 10,000). The
 * published configs under {@code core/src/test/resources/hf} are read twice: by meshplan into the
 * model it exports, and here, by the rules of the Hugging Face families restated below (each
 * family's transformers defaults for a field a config leaves out), into what the framework must
 * build. The frameworks' own defaults are restated too, so a field left out of a file is checked
 * against what the framework then builds:
 *
 * <ul>
 *   <li>Megatron-LM at d98e8a6: rotary base 10,000 ({@code megatron/training/arguments.py:2418}),
 *       norm epsilon 1e-5 ({@code transformer_config.py:201-203}), dropout 0.1 (lines 188-191),
 *       biases on ({@code --disable-bias-linear}, line 212), tied embeddings, no QKV-only biases
 *       (line 218), no q/k norm (line 259), full attention without {@code --window-size}; the
 *       vocabulary is the tokenizer's padded to 128 x TP unless {@code --padded-vocab-size}.
 *   <li>Megatron-DeepSpeed at 4efb479: base 10,000 ({@code megatron/arguments.py:635}), epsilon
 *       1e-5 (652), dropout 0.1 (768, 770), the vocabulary padded to a multiple of {@code
 *       --make-vocab-size-divisible-by} x TP ({@code megatron/tokenizer/tokenizer.py:58-71}).
 *   <li>torchtitan main at b5bcd76: the flavors' numbers ({@code models/llama3/__init__.py:
 *       224-229}: base 500,000, {@code scaling="llama"} with {@code RoPE.Config}'s factors 8, 1, 4
 *       and 8192, {@code models/common/rope.py:97-102}; {@code models/qwen3/__init__.py:65, 545-549,
 *       586-590}: epsilon 1e-6, base 1,000,000 for 30B-A3B and 5,000,000 for 235B-A22B; {@code
 *       models/deepseek_v3/__init__.py:575-584}: base 10,000, YaRN factor 40 over 4096; {@code
 *       RMSNorm.Config}'s default epsilon 1e-5, {@code models/common/nn_modules.py:140}), changed
 *       by the file's {@code rope.X = ...} and {@code norm.eps = ...} lines.
 * </ul>
 *
 * <p>Models a framework cannot build must be refused with a message naming what it lacks.
 */
class ModelFieldsConformanceTest {
  private static final Path HF = Path.of("core/src/test/resources/hf");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ClusterSpec NODE = ClusterSpec.parse("1x8:h100-80gb");

  /** The configs Megatron-LM builds (11 models, 9 families), with one configuration each. */
  private static final List<String> MEGATRON = List.of("llama-2-7b-hf.json",
      "meta-llama-3-8b.json", "meta-llama-3.1-405b.json", "mistral-7b-v0.1.json",
      "mixtral-8x7b-v0.1.json", "mixtral-8x22b-v0.1.json", "qwen2.5-7b.json", "qwen3-8b.json",
      "qwen3-30b-a3b.json", "qwen3-235b-a22b.json", "deepseek-v3.json",
      "phi-3-mini-4k-instruct.json");

  @Test
  void megatronArgumentsAreTheConfigsFieldByField() throws IOException {
    for (String file : MEGATRON) {
      JsonNode c = config(file);
      String text = exported(ExportTarget.MEGATRON, file);
      Map<String, String> a = args(text, "MEGATRON_ARGS=(");
      String type = c.path("model_type").asText();
      String at = file;
      assertThat(a.get("--hidden-size")).as(at).isEqualTo(c.path("hidden_size").asText());
      assertThat(a.get("--num-layers")).as(at).isEqualTo(c.path("num_hidden_layers").asText());
      int heads = c.path("num_attention_heads").asInt();
      assertThat(a.get("--num-attention-heads")).as(at).isEqualTo(String.valueOf(heads));
      int kv = c.path("num_key_value_heads").asInt(heads);
      assertThat(a.get("--num-query-groups")).as(at)
          .isEqualTo(kv < heads ? String.valueOf(kv) : null);
      assertThat(a.get("--padded-vocab-size")).as(at).isEqualTo(c.path("vocab_size").asText());
      ffn(c, type, a, at);
      assertThat(a.containsKey("--swiglu")).as(at).isEqualTo(
          c.path("hidden_act").asText("silu").equals("silu"));
      assertThat(a.get("--normalization")).as(at).isEqualTo("RMSNorm");
      assertThat(Double.parseDouble(a.get("--norm-epsilon"))).as(at).isEqualTo(eps(c, type));
      assertThat(Double.parseDouble(a.get("--rotary-base"))).as(at).isEqualTo(theta(c, type));
      rope(c, type, a, at);
      assertThat(a.containsKey("--untie-embeddings-and-output-weights")).as(at)
          .isEqualTo(!c.path("tie_word_embeddings").asBoolean(false));
      assertThat(a).as(at).containsKey("--disable-bias-linear");
      // Qwen2's modeling file puts biases on q, k and v alone.
      assertThat(a.containsKey("--add-qkv-bias")).as(at).isEqualTo(type.equals("qwen2"));
      headAndNorms(c, type, heads, a, at);
      assertThat(a.get("--window-size")).as(at).isEqualTo(window(c, type));
      assertThat(Double.parseDouble(a.get("--attention-dropout"))).as(at)
          .isEqualTo(c.path("attention_dropout").asDouble(0));
      assertThat(Double.parseDouble(a.get("--hidden-dropout"))).as(at).isEqualTo(0.0);
    }
  }

  @Test
  void megatronRefusesWhatItCannotBuildByName() throws IOException {
    Map<String, String> refused = new LinkedHashMap<>();
    refused.put("gemma-2-9b.json", "a GeGLU MLP");
    refused.put("gemma-3-4b-pt.json", "a GeGLU MLP");
    refused.put("olmo-2-1124-7b.json", "q/k norms over all heads together (OLMo 2)");
    refused.put("granite-3.0-8b-base.json", "embedding_multiplier 12, residual_multiplier 0.22,"
        + " attention_multiplier 0.0078125, logits_scaling 16");
    refused.put("gpt-oss-20b.json", "attention sinks, expert biases");
    refused.put("gpt-neox-20b.json", "a parallel residual (use_parallel_residual)");
    refused.put("opt-1.3b.json", "no ReLU MLP");
    refused.put("starcoder2-3b.json", "--rotary-base takes an integer (arguments.py:2418);"
        + " starcoder2-3b has rope_theta 999999.4420358813");
    for (Map.Entry<String, String> e : refused.entrySet()) {
      ExportResult r = new Exporter().export(ExportTarget.MEGATRON,
          input(e.getKey(), ExportTarget.MEGATRON));
      assertThat(r).as(e.getKey()).isInstanceOf(ExportResult.NotExpressible.class);
      assertThat(((ExportResult.NotExpressible) r).missing()).as(e.getKey())
          .contains(e.getValue());
    }
  }

  @Test
  void megatronDeepSpeedArgumentsAreTheConfigsOrNameWhatItLacks() throws IOException {
    for (String file : List.of("llama-2-7b-hf.json", "meta-llama-3-8b.json")) {
      JsonNode c = config(file);
      Map<String, String> a = args(exported(ExportTarget.DEEPSPEED, file), "DS_ARGS=(");
      String at = file;
      assertThat(a.get("--hidden-size")).as(at).isEqualTo(c.path("hidden_size").asText());
      assertThat(a.get("--num-layers")).as(at).isEqualTo(c.path("num_hidden_layers").asText());
      assertThat(a.get("--num-key-value-heads")).as(at)
          .isEqualTo(c.path("num_key_value_heads").asText());
      assertThat(a.get("--ffn-hidden-size")).as(at).isEqualTo(c.path("intermediate_size")
          .asText());
      assertThat(Double.parseDouble(a.get("--rotary-position-embeddings-theta"))).as(at)
          .isEqualTo(theta(c, "llama"));
      assertThat(Double.parseDouble(a.get("--layernorm-epsilon"))).as(at)
          .isEqualTo(eps(c, "llama"));
      assertThat(a.containsKey("--untie-embeddings-and-output-weights")).as(at).isTrue();
      assertThat(Double.parseDouble(a.get("--attention-dropout"))).as(at).isZero();
      assertThat(Double.parseDouble(a.get("--hidden-dropout"))).as(at).isZero();
      // tokenizer.py:58-71 pads any tokenizer of at most V tokens to the multiple, V itself.
      int tp = Integer.parseInt(a.get("--tensor-model-parallel-size"));
      assertThat(Integer.parseInt(a.get("--make-vocab-size-divisible-by")) * tp).as(at)
          .isEqualTo(c.path("vocab_size").asInt());
    }
    Map<String, String> refused = new LinkedHashMap<>();
    refused.put("meta-llama-3.1-405b.json", "no RoPE scaling; meta-llama-3.1-405b scales RoPE as"
        + " llama3 (factor 8");
    refused.put("mistral-7b-v0.1.json", "no sliding-window attention");
    refused.put("phi-3-mini-4k-instruct.json", "no sliding-window attention");
    refused.put("qwen2.5-7b.json", "QKV biases");
    refused.put("qwen3-8b.json", "q/k norms");
    refused.put("gpt-neox-20b.json", "parallel residual");
    for (Map.Entry<String, String> e : refused.entrySet()) {
      ExportResult r = new Exporter().export(ExportTarget.DEEPSPEED,
          input(e.getKey(), ExportTarget.DEEPSPEED));
      assertThat(r).as(e.getKey()).isInstanceOf(ExportResult.NotExpressible.class);
      assertThat(((ExportResult.NotExpressible) r).missing()).as(e.getKey())
          .contains(e.getValue());
    }
  }

  @Test
  void torchtitanFlavorsTakeTheConfigsRopeAndNorms() throws IOException {
    Map<String, double[]> flavor = Map.of(
        // {theta, llama3 scaling (1) or yarn factor (>1) or none (0), eps}
        "llama3", new double[] {500_000, 1, 1e-5},
        "30B-A3B", new double[] {1_000_000, 0, 1e-6},
        "235B-A22B", new double[] {5_000_000, 0, 1e-6},
        "671B", new double[] {10_000, 40, 1e-5});
    for (String file : List.of("meta-llama-3-8b.json", "meta-llama-3.1-405b.json",
        "qwen3-30b-a3b.json", "qwen3-235b-a22b.json", "deepseek-v3.json")) {
      JsonNode c = config(file);
      String type = c.path("model_type").asText();
      String text = exported(ExportTarget.TORCHTITAN, file);
      TorchtitanPythonFile f = TorchtitanPythonFile.parse(text);
      double[] base = flavor.getOrDefault(f.flavor(), flavor.get("llama3"));
      double theta = number(text, "rope.theta", base[0]);
      String scaling = string(text, "rope.scaling", base[1] == 0 ? "none" : base[1] == 1
          ? "llama" : "yarn");
      double eps = number(text, "norm.eps", base[2]);
      assertThat(theta).as(file).isEqualTo(theta(c, type));
      assertThat(eps).as(file).isEqualTo(eps(c, type));
      JsonNode rs = c.path("rope_scaling");
      String want = rs.isObject() ? rs.path("rope_type").asText(rs.path("type").asText()) : "none";
      assertThat(scaling).as(file).isEqualTo(want.equals("llama3") ? "llama" : want);
      if (want.equals("yarn")) {
        assertThat(base[1]).as(file).isEqualTo(rs.path("factor").asDouble());
      }
    }
    // v0.2.2's TOML names a flavor and none of its numbers: Llama 3's unscaled RoPE is refused.
    ExportResult r = new Exporter().export(ExportTarget.TORCHTITAN_V022,
        input("meta-llama-3-8b.json", ExportTarget.TORCHTITAN_V022));
    assertThat(((ExportResult.NotExpressible) r).missing()).contains("RoPE scaling none",
        "--framework-version main");
  }

  /** The MLP sizes: a dense model's, or the experts' and the dense blocks'. */
  private static void ffn(JsonNode c, String type, Map<String, String> a, String at) {
    switch (type) {
      case "mixtral" -> assertThat(a.get("--moe-ffn-hidden-size")).as(at)
          .isEqualTo(c.path("intermediate_size").asText());
      case "qwen3_moe", "deepseek_v3" -> {
        assertThat(a.get("--moe-ffn-hidden-size")).as(at)
            .isEqualTo(c.path("moe_intermediate_size").asText());
        if (type.equals("deepseek_v3")) {
          assertThat(a.get("--ffn-hidden-size")).as(at)
              .isEqualTo(c.path("intermediate_size").asText());
        }
      }
      default -> assertThat(a.get("--ffn-hidden-size")).as(at)
          .isEqualTo(c.path("intermediate_size").asText());
    }
  }

  /** The RoPE scaling: none, Llama 3.1's, or DeepSeek-V3's YaRN under latent attention. */
  private static void rope(JsonNode c, String type, Map<String, String> a, String at) {
    JsonNode s = c.path("rope_scaling");
    String kind = s.isObject() ? s.path("rope_type").asText(s.path("type").asText()) : "none";
    assertThat(a.get("--position-embedding-type")).as(at).isEqualTo("rope");
    assertThat(a.containsKey("--use-rope-scaling")).as(at).isEqualTo(kind.equals("llama3"));
    if (kind.equals("llama3")) {
      // rotary_pos_embedding.py:92-106: factor 8, low 1, high 4, original 8192, fixed.
      assertThat(List.of(s.path("factor").asDouble(), s.path("low_freq_factor").asDouble(),
          s.path("high_freq_factor").asDouble(), s.path("original_max_position_embeddings")
              .asDouble())).as(at).containsExactly(8.0, 1.0, 4.0, 8192.0);
    }
    if (type.equals("deepseek_v3")) {
      assertThat(a.get("--rope-type")).as(at).isEqualTo(kind);
      assertThat(Double.parseDouble(a.get("--rotary-scaling-factor"))).as(at)
          .isEqualTo(s.path("factor").asDouble());
      assertThat(Double.parseDouble(a.get("--mscale"))).as(at)
          .isEqualTo(s.path("mscale").asDouble());
      assertThat(Double.parseDouble(a.get("--mscale-all-dim"))).as(at)
          .isEqualTo(s.path("mscale_all_dim").asDouble());
      // MLATransformerConfig's defaults, which the file relies on (transformer_config.py).
      assertThat(List.of(s.path("original_max_position_embeddings").asInt(),
          s.path("beta_fast").asInt(), s.path("beta_slow").asInt())).as(at)
          .containsExactly(4096, 32, 1);
    } else {
      assertThat(a).as(at).doesNotContainKey("--rope-type");
    }
  }

  /** The head size and the q/k norms. */
  private static void headAndNorms(JsonNode c, String type, int heads, Map<String, String> a,
      String at) {
    int hidden = c.path("hidden_size").asInt();
    if (c.has("head_dim") && c.path("head_dim").asInt() != hidden / heads) {
      assertThat(a.get("--kv-channels")).as(at).isEqualTo(c.path("head_dim").asText());
    } else if (a.containsKey("--kv-channels") && !type.equals("deepseek_v3")) {
      assertThat(Integer.parseInt(a.get("--kv-channels"))).as(at)
          .isEqualTo(c.path("head_dim").asInt(hidden / heads));
    }
    // Qwen3's per-head q/k RMSNorms; DeepSeek-V3's latent norms ride on the same flag.
    assertThat(a.containsKey("--qk-layernorm")).as(at).isEqualTo(type.startsWith("qwen3")
        || type.equals("deepseek_v3"));
  }

  /**
   * The window Megatron-LM must have, {@code "w-1,0"}: Mistral and Phi-3 window every layer when
   * {@code sliding_window} is not null, Qwen2 and Qwen3 only with {@code use_sliding_window}.
   */
  private static String window(JsonNode c, String type) {
    JsonNode w = c.path("sliding_window");
    boolean on = switch (type) {
      case "mistral", "phi3", "mixtral" -> w.isNumber();
      case "qwen2", "qwen3", "qwen3_moe" -> c.path("use_sliding_window").asBoolean(false);
      default -> false;
    };
    return on ? (w.asInt() - 1) + ",0" : null;
  }

  /** {@code rope_theta}, or the family's transformers default. */
  private static double theta(JsonNode c, String type) {
    return c.has("rope_theta") ? c.path("rope_theta").asDouble()
        : type.equals("mixtral") ? 1e6 : 10_000;
  }

  /** {@code rms_norm_eps}, or the family's transformers default. */
  private static double eps(JsonNode c, String type) {
    return c.has("rms_norm_eps") ? c.path("rms_norm_eps").asDouble()
        : List.of("mixtral", "phi3").contains(type) ? 1e-5 : 1e-6;
  }

  private static JsonNode config(String file) throws IOException {
    return JSON.readTree(Files.readString(HF.resolve(file)));
  }

  /**
   * The config's model, trained in bf16 (simulate's precision on H100s) on one node, data
   * parallel with ZeRO-1 (ZeRO-3 for torchtitan, whose FSDP without a pipeline is ZeRO-3).
   */
  private static ExportInput input(String file, ExportTarget t) {
    ModelSpec m = HfConfigReader.read(HF.resolve(file));
    m = m.withTraining(m.batch(), DType.BF16);
    boolean titan = t == ExportTarget.TORCHTITAN || t == ExportTarget.TORCHTITAN_V022;
    return new ExportInput(m, NODE, new ParallelConfig(1, 1, 8, 1, 1, 8, Recompute.FULL, false,
        titan ? 3 : 1));
  }

  private static String exported(ExportTarget t, String file) {
    ExportResult r = new Exporter().export(t, input(file, t));
    assertThat(r).as(file + " " + r).isInstanceOf(ExportResult.Exported.class);
    return ((ExportResult.Exported) r).text();
  }

  /** A bash array's options: each {@code --flag} with the word after it, or empty. */
  private static Map<String, String> args(String file, String open) {
    Map<String, String> a = new LinkedHashMap<>();
    int at = file.indexOf(open + "\n");
    String body = file.substring(at + open.length() + 1, file.indexOf("\n)\n", at));
    String last = null;
    for (String w : body.strip().split("\\s+")) {
      if (w.startsWith("--")) {
        a.put(w, "");
        last = w;
      } else if (last != null) {
        a.put(last, w.replace("'", ""));
        last = null;
      }
    }
    return a;
  }

  private static double number(String text, String name, double dflt) {
    Matcher m = Pattern.compile("(?m)^ +" + Pattern.quote(name) + " = (\\S+)$").matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : dflt;
  }

  private static String string(String text, String name, String dflt) {
    Matcher m = Pattern.compile("(?m)^ +" + Pattern.quote(name) + " = \"(\\w+)\"$")
        .matcher(text);
    return m.find() ? m.group(1) : dflt;
  }
}

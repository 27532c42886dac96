package io.meshplan.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.graph.DType;
import io.meshplan.util.InputException;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a Hugging Face {@code config.json} into a {@link ModelSpec}. Supported {@code model_type}s
 * and the fields read:
 *
 * <ul>
 *   <li>{@code llama}, {@code mistral}: {@code hidden_size}, {@code num_hidden_layers}, {@code
 *       num_attention_heads}, {@code num_key_value_heads} (default: the number of heads), {@code
 *       intermediate_size}, {@code vocab_size}, {@code max_position_embeddings}, {@code
 *       tie_word_embeddings} (default false). LLaMA family: RMSNorm, rotary, SwiGLU, no biases.
 *   <li>{@code gpt_neox}: {@code hidden_size}, {@code num_hidden_layers}, {@code
 *       num_attention_heads}, {@code intermediate_size}, {@code vocab_size}, {@code
 *       max_position_embeddings}, {@code tie_word_embeddings} (default false). LayerNorm, rotary,
 *       GeLU, biases. The parallel residual of GPT-NeoX changes neither parameters nor FLOPs and is
 *       not modelled.
 *   <li>{@code opt}: {@code hidden_size}, {@code num_hidden_layers}, {@code num_attention_heads},
 *       {@code ffn_dim}, {@code vocab_size}, {@code max_position_embeddings} (the table has two
 *       extra rows), {@code word_embed_proj_dim} (must equal {@code hidden_size}: the projection
 *       of OPT-350m is not modelled), {@code tie_word_embeddings} (default true). LayerNorm,
 *       learned positions, ReLU, biases.
 *   <li>{@code llama4} (its {@code text_config}), {@code llama4_text}: Llama 4 Scout and
 *       Maverick;
 *   <li>{@code qwen2}, {@code qwen3}, {@code gemma2}, {@code gemma3} (its {@code text_config}),
 *       {@code gemma3_text}, {@code phi3}, {@code olmo2}, {@code granite}, {@code starcoder2}:
 *       see {@link HfFamilies}, with the defaults of their transformers configuration classes.
 *   <li>{@code mixtral}, {@code qwen3_moe}, {@code olmoe}, {@code gpt_oss}: the
 *       mixture-of-experts families, read as {@link HfFamilies} reads the others, with their
 *       experts from {@link HfMoe} ({@code olmoe} without defaults).
 *   <li>{@code deepseek_v3}: latent attention, experts and dense blocks, multi-token prediction
 *       ({@link HfDeepseek}); {@code deepseek_v2} (DeepSeek-V2 and V2-Lite, the same blocks,
 *       every size field stated), {@code kimi_k2} (Kimi K2, the same architecture, every size
 *       field stated) and {@code kimi_k25} (its {@code text_config}, a {@code kimi_k2}).
 * </ul>
 *
 * A directory is read as the {@code config.json} inside it.
 *
 * The workload defaults to batch 8 and the sequence the model was pre-trained on ({@link
 * HfSequence}: the context before a RoPE extension where the config states it, else {@code
 * max_position_embeddings}, capped at {@link #DEFAULT_SEQ_CAP}); the element type comes from
 * {@code torch_dtype} (default bf16).
 * Files over {@link #MAX_BYTES} and non-regular files are refused.
 */
public final class HfConfigReader {
  /** The largest config file read, bytes (real ones are under 2 KiB). */
  public static final int MAX_BYTES = 1 << 20;
  /** The largest default sequence length, tokens ({@link HfSequence#CAP}). */
  public static final int DEFAULT_SEQ_CAP = HfSequence.CAP;
  static final int DEFAULT_BATCH = 8;
  /** The {@code model_type}s read ({@link HfModelType#ALL}), for the message refusing another. */
  public static final java.util.List<String> SUPPORTED = HfModelType.ALL.stream()
      .map(HfModelType::name).toList();
  private static final ObjectMapper MAPPER = TreeReaders.json();

  private HfConfigReader() {}

  /**
   * Reads a config file.
   *
   * @param file the {@code config.json}
   * @return the model spec, named after the file's {@code _name_or_path}, else its folder for a
   *     {@code config.json}, else the file name without {@code .json}
   * @throws InputException naming the file and the missing, mistyped or unsupported field
   */
  public static ModelSpec read(Path file) {
    return readConfig(file).spec();
  }

  /**
   * A model read from its config, with the config's fields meshplan does not know.
   *
   * @param spec the model
   * @param warnings one line per field outside the family's known list, which may change the
   *     model's cost; empty for LLaMA, Mistral, GPT-NeoX and OPT
   * @param sequenceNote why the default sequence is below {@code max_position_embeddings}
   *     ({@link HfSequence}), when it is
   */
  public record HfConfig(ModelSpec spec, java.util.List<String> warnings,
      java.util.Optional<String> sequenceNote) {
    /** Copies the warnings. */
    public HfConfig {
      warnings = java.util.List.copyOf(warnings);
      sequenceNote = sequenceNote == null ? java.util.Optional.empty() : sequenceNote;
    }

    /**
     * A model whose default sequence is its {@code max_position_embeddings}.
     *
     * @param spec the model
     * @param warnings the unknown fields
     */
    public HfConfig(ModelSpec spec, java.util.List<String> warnings) {
      this(spec, warnings, java.util.Optional.empty());
    }
  }

  /**
   * The file a path names as a model config: the {@code config.json} inside a directory, else
   * the path itself. It is what {@link #readConfig} reads, and what outputs must never replace.
   *
   * @param path the {@code config.json} or its directory
   * @return the file
   */
  public static Path configFile(Path path) {
    return Files.isDirectory(path) ? path.resolve("config.json") : path;
  }

  /**
   * Reads a config file, or the {@code config.json} of a directory, with its warnings.
   *
   * @param path the {@code config.json} or its directory
   * @return the model and the warnings
   * @throws InputException naming the file and the missing, mistyped or unsupported field
   */
  public static HfConfig readConfig(Path path) {
    return readConfig(path, SUPPORTED);
  }

  /**
   * Reads a config file, or the {@code config.json} of a directory, for a caller that takes some
   * of the types: a type the reader does not read is refused listing those. (A type it reads is
   * read; the caller refuses what it cannot run, naming why.)
   *
   * @param path the {@code config.json} or its directory
   * @param types the {@code model_type}s the caller takes, some of {@link #SUPPORTED}
   * @return the model and the warnings
   * @throws InputException naming the file and the missing, mistyped or unsupported field, and
   *     listing {@code types} for a type the reader does not read
   */
  public static HfConfig readConfig(Path path, java.util.List<String> types) {
    Path file = configFile(path);
    // No such file, a directory without config.json, a FIFO or a device: each said as it is.
    io.meshplan.util.InputFiles.checkRegular(file, Files.isDirectory(path)
        ? "the Hugging Face config.json of directory " + path : "a Hugging Face config.json");
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_BYTES + 1);
    } catch (IOException e) {
      throw new InputException(file + ": cannot read (" + e.getClass().getSimpleName() + ")", e);
    }
    if (bytes.length > MAX_BYTES) {
      throw new InputException(file + ": larger than " + MAX_BYTES
          + " bytes; a config.json is a few KiB");
    }
    // A file named config.json is named after its folder (as Hugging Face stores them), any other
    // after itself.
    Path abs = file.toAbsolutePath();
    String base = abs.getFileName() + "";
    String fallback = base.equals("config.json") && abs.getParent() != null
        && abs.getParent().getFileName() != null ? abs.getParent().getFileName() + ""
        : base.endsWith(".json") ? base.substring(0, base.length() - 5) : base;
    String json = io.meshplan.util.InputFiles.withoutMark(new String(bytes,
        StandardCharsets.UTF_8));
    String type = new HfFields(tree(json, file.toString()), file.toString()).string("model_type");
    if (!SUPPORTED.contains(type)) {
      throw new InputException(file + ": model_type '" + type + "' is not supported; supported: "
          + String.join(", ", types));
    }
    return parseConfig(json, file.toString(), fallback);
  }

  /**
   * Parses config text.
   *
   * @param json the text
   * @param where the file name for messages
   * @param fallbackName the model name when the config has no {@code _name_or_path}
   * @return the model spec
   * @throws InputException naming {@code where} and the field
   */
  public static ModelSpec parse(String json, String where, String fallbackName) {
    return parseConfig(json, where, fallbackName).spec();
  }

  /**
   * Parses config text, with its warnings.
   *
   * @param json the text
   * @param where the file name for messages
   * @param fallbackName the model name when the config has no {@code _name_or_path}
   * @return the model and the warnings
   * @throws InputException naming {@code where} and the field
   */
  public static HfConfig parseConfig(String json, String where, String fallbackName) {
    JsonNode root = tree(json, where);
    HfFields top = new HfFields(root, where);
    String type = top.string("model_type");
    JsonNode text = root;
    java.util.List<String> warnings = new java.util.ArrayList<>();
    if (type.equals("gemma3") || type.equals("llama4") || type.equals("kimi_k25")) {
      text = root.get("text_config");
      if (text == null || !text.isObject()) {
        throw new InputException(where + ": a " + type + " config needs its text model in the "
            + "object 'text_config'");
      }
      // Kimi K2.5's text model is a Kimi K2 (DeepSeek-V3's architecture), and says so; Gemma
      // 3's and Llama 4's say theirs where they give one (a llama text model in a gemma3
      // config was read as Gemma 3).
      String expected = type.equals("kimi_k25") ? "kimi_k2" : type + "_text";
      JsonNode innerType = text.get("model_type");
      if (type.equals("kimi_k25") || innerType != null && !innerType.isNull()) {
        String inner = new HfFields(text, where + ": text_config").string("model_type");
        if (!inner.equals(expected)) {
          throw new InputException(where + ": text_config: model_type '" + inner
              + "' is not the " + expected + " text model a " + type + " config holds");
        }
      }
      type = type.equals("kimi_k25") ? "kimi_k2" : type + "_text";
      if (root.has("vision_config")) {
        warnings.add(where + ": the vision tower (vision_config) is neither counted nor planned; "
            + "meshplan plans the text model");
      }
    }
    if (!SUPPORTED.contains(type)) {
      throw new InputException(where + ": model_type '" + type + "' is not supported; "
          + "supported: " + String.join(", ", SUPPORTED));
    }
    HfFields f = new HfFields(text, where, HfFamilies.defaults(type));
    if (HfFamilies.KNOWN.containsKey(type)) {
      for (String k : HfFamilies.unknownFields(text, type)) {
        warnings.add(where + ": field '" + k + "' is not one meshplan knows for model_type "
            + type + "; it is ignored, and may change the model's cost");
      }
    }
    String name = root.path("_name_or_path").isTextual()
        && !root.path("_name_or_path").asText().isBlank()
        ? root.path("_name_or_path").asText() : fallbackName;
    int hidden = f.positive("hidden_size");
    int layers = f.positive("num_hidden_layers");
    if (layers > ModelSpec.MAX_LAYERS) {
      // Refused before any per-layer list (MoE layers, window patterns) is built.
      throw new InputException(where + ": field 'num_hidden_layers' must be at most "
          + ModelSpec.MAX_LAYERS + ", got " + layers);
    }
    int heads = f.positive("num_attention_heads");
    int vocab = f.positive("vocab_size");
    int maxPos = f.positive("max_position_embeddings");
    DType dtype = dtype(top, root);
    HfSequence seq = HfSequence.of(text, where, maxPos);
    Common c = new Common(name, layers, hidden, heads, vocab, maxPos, seq.tokens(), dtype);
    try {
      ModelSpec spec = HfRegistry.find(type).orElseThrow().reader().read(type, f, c);
      return new HfConfig(spec, warnings, seq.note());
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage(), e);
    } catch (ArithmeticException e) {
      throw new InputException(where + ": max_position_embeddings " + maxPos + " is too large",
          e);
    }
  }

  /** The fields every supported {@code model_type} has, read before the family's own. */
  record Common(String name, int layers, int hidden, int heads, int vocab, int maxPos,
      int seq, DType dtype) {}

  private static JsonNode tree(String json, String where) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new InputException(where + ": not valid JSON (" + JsonErrors.describe(e) + ")");
    }
    if (root == null || !root.isObject()) {
      throw new InputException(where + ": a config.json is a JSON object");
    }
    return root;
  }

  /** Llama and Mistral: SwiGLU, RMSNorm, rotary positions, grouped-query attention. */
  static ModelSpec llama(String type, HfFields f, Common c) {
    JsonNode root = f.root();
    int kv = root.has("num_key_value_heads") && !root.get("num_key_value_heads").isNull()
        ? f.positive("num_key_value_heads") : c.heads();
    boolean tied = f.bool("tie_word_embeddings", false);
    // LlamaConfig's biases on the attention and MLP projections, which meshplan does not price.
    HfFamilies.refuse(f, "attention_bias");
    HfFamilies.refuse(f, "mlp_bias");
    // head_dim where the config gives one other than hidden / heads (Mistral-Nemo: 128 of 5120
    // over 32 heads), as LlamaAttention and MistralAttention read it.
    AttentionShape shape = AttentionShape.plain(HfFamilies.headDim(f, type, c));
    return new ModelSpec(c.name(), ModelSpec.Family.LLAMA, c.layers(), c.hidden(), c.heads(), kv,
        f.positive("intermediate_size"), c.vocab(), c.seq(), DEFAULT_BATCH, c.dtype(),
        new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
            Architecture.Positions.ROTARY, 0, false, tied,
            HfWindows.of(type, f, c.layers(), shape))
            .withNumerics(HfNumerics.read(type, f)));
  }

  /** GPT-NeoX (Pythia): GELU, LayerNorm, rotary positions, biases. */
  static ModelSpec gptNeox(HfFields f, Common c) {
    boolean tied = f.bool("tie_word_embeddings", false);
    return new ModelSpec(c.name(), ModelSpec.Family.GPT, c.layers(), c.hidden(), c.heads(),
        c.heads(), f.positive("intermediate_size"), c.vocab(), c.seq(), DEFAULT_BATCH, c.dtype(),
        new Architecture(Architecture.Mlp.GELU, Architecture.Norm.LAYER,
            Architecture.Positions.ROTARY, 0, true, tied)
            .withNumerics(HfNumerics.read("gpt_neox", f)));
  }

  /** OPT: learned positions; embedding projections (opt-350m) are refused. */
  static ModelSpec opt(HfFields f, Common c) {
    int proj = f.positive("word_embed_proj_dim");
    if (proj != c.hidden()) {
      throw new InputException(f.where() + ": word_embed_proj_dim " + proj
          + " differs from hidden_size " + c.hidden() + "; OPT models with an embedding "
          + "projection (such as opt-350m) are not supported");
    }
    boolean tied = f.bool("tie_word_embeddings", true);
    Architecture a = Architecture.opt(c.maxPos());
    return new ModelSpec(c.name(), ModelSpec.Family.GPT, c.layers(), c.hidden(), c.heads(),
        c.heads(), f.positive("ffn_dim"), c.vocab(), c.seq(), DEFAULT_BATCH, c.dtype(),
        new Architecture(a.mlp(), a.norm(), a.positions(), a.positionRows(), true, tied)
            .withNumerics(HfNumerics.read("opt", f)));
  }

  private static DType dtype(HfFields f, JsonNode root) {
    if (!root.has("torch_dtype") || root.get("torch_dtype").isNull()) {
      return DType.BF16;
    }
    String t = f.string("torch_dtype");
    return switch (t) {
      case "bfloat16" -> DType.BF16;
      case "float16" -> DType.F16;
      case "float32" -> DType.F32;
      default -> throw new InputException(f.where() + ": torch_dtype '" + t
          + "' is not supported; use bfloat16, float16 or float32");
    };
  }
}

package io.meshplan.plan;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;

/**
 * A pipeline split written out chunk by chunk, as Megatron-Core's {@code
 * --pipeline-model-parallel-layout} states it ({@code PipelineParallelLayerLayout} in {@code
 * megatron/core/transformer/pipeline_parallel_layer_layout.py}, read at d98e8a6): chunks separated
 * by {@code |}, in layer order (chunk {@code k} on stage {@code k mod pp}, so the layout has a
 * multiple of {@code pp} chunks and {@code vpp} is their number over {@code pp}); in each, {@code
 * E} the embedding, {@code t} a transformer layer, {@code m} a multi-token prediction module and
 * {@code L} the loss (with the LM head); {@code x*n} repeats a letter, {@code (...)*n} a group
 * (groups do not nest), commas are ignored. DeepSeek-V3's recipes on H100 are {@code
 * "Et|(tt|)*30mL"}: 61 layers in 32 chunks, the last holding only the prediction module and the
 * loss.
 *
 * @param text the layout as given
 * @param chunks each chunk's letters, expanded, in layer order
 */
public record PipelineLayout(String text, List<String> chunks) implements PipelineSplit {
  /** The longest layout text read, characters. */
  public static final int MAX_TEXT = 65_536;
  /** The most letters a layout may expand to (a model's layers are far fewer). */
  public static final int MAX_EXPANDED = 1 << 20;

  /** Copies the chunks. */
  public PipelineLayout {
    io.meshplan.util.Require.nonNull(text, "layout text");
    chunks = List.copyOf(chunks);
  }

  /**
   * The layout of given chunk sizes: the embedding in the first chunk, the prediction modules and
   * the loss in the last, each chunk's transformer layers written out ({@code "Ett|ttt|ttL"}).
   *
   * @param chunkLayers transformer layers per chunk in layer order, each at least 1
   * @param mtpDepth the model's multi-token prediction modules
   * @return the layout
   */
  public static PipelineLayout of(int[] chunkLayers, int mtpDepth) {
    io.meshplan.util.Require.that(chunkLayers.length > 0, "a layout has chunks");
    List<String> chunks = new ArrayList<>();
    for (int k = 0; k < chunkLayers.length; k++) {
      io.meshplan.util.Require.that(chunkLayers[k] >= 1, "chunk " + k + " holds no layer");
      chunks.add((k == 0 ? "E" : "") + "t".repeat(chunkLayers[k])
          + (k == chunkLayers.length - 1 ? "m".repeat(mtpDepth) + "L" : ""));
    }
    return new PipelineLayout(String.join("|", chunks), chunks);
  }

  /**
   * Reads a layout.
   *
   * @param text Megatron-Core's layout string
   * @param pipelineParallel the pipeline-parallel size, which must divide the chunks
   * @return the layout
   * @throws InputException in one line when it is not a layout
   */
  public static PipelineLayout parse(String text, int pipelineParallel) {
    if (pipelineParallel < 1) {
      throw new InputException("--pp must be at least 1, got " + pipelineParallel);
    }
    if (text.length() > MAX_TEXT) {
      throw bad("is " + text.length() + " characters long, more than " + MAX_TEXT);
    }
    String expanded = repeatLetters(expandGroups(text.replace(",", "")));
    List<String> chunks = new ArrayList<>(List.of(expanded.split("\\|", -1)));
    for (int i = 0; i < expanded.length(); i++) {
      char c = expanded.charAt(i);
      if (c != '|' && "ELtm".indexOf(c) < 0) {
        throw bad("has '" + c + "', which is not a layer; use E (embedding), t (transformer "
            + "layer), m (multi-token prediction), L (loss), | between chunks, x*n and (...)*n");
      }
    }
    if (chunks.size() % pipelineParallel != 0) {
      throw bad("has " + chunks.size() + " chunks, not a multiple of --pp " + pipelineParallel);
    }
    return new PipelineLayout(text, chunks);
  }

  /** Unrolls {@code (...)*n} groups, which may not nest. */
  private static String expandGroups(String s) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == ')') {
        throw bad("has a ')' without its '('");
      }
      if (c != '(') {
        append(out, String.valueOf(c), 1);
        i++;
        continue;
      }
      int close = s.indexOf(')', i + 1);
      int nested = s.indexOf('(', i + 1);
      if (close < 0) {
        throw bad("has a '(' without its ')'");
      }
      if (nested >= 0 && nested < close) {
        throw bad("nests parentheses, which Megatron-Core's layouts do not");
      }
      int[] count = count(s, close + 1, "a group (...)");
      append(out, s.substring(i + 1, close), count[0]);
      i = count[1];
    }
    return out.toString();
  }

  /** Unrolls {@code x*n}. */
  private static String repeatLetters(String s) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < s.length()) {
      if (s.charAt(i) == '*') {
        throw bad("has a '*' that follows no letter");
      }
      if (i + 1 < s.length() && s.charAt(i + 1) == '*') {
        int[] count = count(s, i + 1, "'" + s.charAt(i) + "'");
        append(out, String.valueOf(s.charAt(i)), count[0]);
        i = count[1];
      } else {
        append(out, String.valueOf(s.charAt(i)), 1);
        i++;
      }
    }
    return out.toString();
  }

  /** The repeat count {@code *n} at {@code at}: {n, the index after it}. */
  private static int[] count(String s, int at, String what) {
    if (at >= s.length() || s.charAt(at) != '*') {
      throw bad("has " + what + " not followed by *n");
    }
    int j = at + 1;
    long n = 0;
    while (j < s.length() && AsciiDigits.isDigit(s.charAt(j))) {
      n = n * 10 + (s.charAt(j) - '0');
      if (n > MAX_EXPANDED) {
        throw bad("repeats " + what + " more than " + MAX_EXPANDED + " times");
      }
      j++;
    }
    if (j == at + 1) {
      throw bad("has " + what + "* without a count");
    }
    return new int[] {(int) n, j};
  }

  /** Appends {@code n} copies of {@code part}, refusing a layout that grows past the cap. */
  private static void append(StringBuilder out, String part, int n) {
    if ((long) out.length() + (long) part.length() * n > MAX_EXPANDED) {
      throw bad("expands to more than " + MAX_EXPANDED + " letters");
    }
    out.append(part.repeat(n));
  }

  private static InputException bad(String why) {
    return new InputException("--pipeline-model-parallel-layout " + why);
  }

  @Override
  public boolean any() {
    return true;
  }

  /**
   * The model chunks per pipeline stage.
   *
   * @param pipelineParallel the pipeline-parallel size
   * @return chunks over pp
   */
  public int virtualStages(int pipelineParallel) {
    return chunks.size() / pipelineParallel;
  }

  /**
   * The multi-token prediction modules the layout places.
   *
   * @return the {@code m} letters
   */
  public int mtpLayers() {
    return (int) letters().chars().filter(c -> c == 'm').count();
  }

  @Override
  public int[] chunkLayers(int layers, int pipelineParallel, int virtualStages) {
    int[] out = new int[chunks.size()];
    for (int k = 0; k < out.length; k++) {
      out[k] = (int) chunks.get(k).chars().filter(c -> c == 't').count();
    }
    return out;
  }

  /**
   * Megatron-Core's rules ({@code validate_layer_layout}): the chunks are {@code pp x vpp}; the
   * layout starts with the embedding and ends with the loss, each once; its transformer layers
   * are the model's; the prediction modules follow every transformer layer, in one chunk, the
   * last chunk of a stage. Not with stated first- or last-stage layers or the counted split
   * ({@code TransformerConfig.__post_init__}). meshplan prices the embedding with the first
   * chunk and the loss and prediction modules with the last, and every chunk holding a layer, so
   * an empty chunk, or a first or last chunk without them, is refused.
   */
  @Override
  public void check(int layers, int pipelineParallel, int virtualStages, boolean statedStages) {
    if (statedStages) {
      throw bad("cannot be given with --first-stage-layers or --last-stage-layers, as in "
          + "Megatron-LM");
    }
    if (chunks.size() != pipelineParallel * virtualStages) {
      throw bad("has " + chunks.size() + " chunks, but --pp " + pipelineParallel + " x --vpp "
          + virtualStages + " = " + pipelineParallel * virtualStages);
    }
    String all = letters();
    if (all.isEmpty() || all.charAt(0) != 'E' || all.indexOf('E', 1) >= 0) {
      throw bad("must start with the embedding E, once");
    }
    if (all.charAt(all.length() - 1) != 'L' || all.indexOf('L') != all.length() - 1) {
      throw bad("must end with the loss L, once");
    }
    long t = all.chars().filter(c -> c == 't').count();
    if (t != layers) {
      throw bad("places " + t + " transformer layers, but the model has " + layers);
    }
    int firstM = all.indexOf('m');
    if (firstM >= 0 && all.indexOf('t', firstM) >= 0) {
      throw bad("places a transformer layer after a prediction module m");
    }
    for (int k = 0; k < chunks.size(); k++) {
      if (chunks.get(k).isEmpty()) {
        throw bad("has an empty chunk " + k + "; meshplan prices chunks that hold a layer");
      }
    }
    String last = chunks.get(chunks.size() - 1);
    if (firstM >= 0 && last.chars().filter(c -> c == 'm').count() != mtpLayers()) {
      throw bad("places prediction modules m outside the last chunk; meshplan prices them with "
          + "the loss");
    }
  }

  /**
   * The multi-token prediction modules against the model's ({@code mtp_num_layers}).
   *
   * @param mtpDepth the model's modules
   * @throws InputException when they differ
   */
  public void checkMtp(int mtpDepth) {
    if (mtpLayers() != mtpDepth) {
      throw bad("places " + mtpLayers() + " prediction modules m, but the model trains "
          + mtpDepth);
    }
  }

  /** Every chunk's letters in layer order. */
  private String letters() {
    return String.join("", chunks);
  }

  @Override
  public List<List<String>> megatronArgs() {
    return List.of(List.of("--pipeline-model-parallel-layout", text));
  }
}

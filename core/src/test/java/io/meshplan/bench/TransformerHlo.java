package io.meshplan.bench;

import java.util.Locale;

/**
 * Generates HLO text that looks like a JAX dump of a transformer training step: per layer a forward
 * and a backward pass of attention and MLP ops with layouts and metadata, a reducer computation,
 * parameters with an input/output alias per weight, and a root tuple of the updated weights.
 */
final class TransformerHlo {
  private TransformerHlo() {}

  private static final String ACT = "bf16[8,2048,4096]{2,1,0}";
  private static final String W = "bf16[4096,4096]{1,0}";
  private static final String ROW = "f32[8,2048]{1,0}";

  /**
   * Makes the text.
   *
   * @param layers the number of layers
   * @param target about how many entry instructions to make
   * @return HLO text
   */
  static String generate(int layers, int target) {
    int perLayer = Math.max(40, (target - 3 * layers - 4) / layers);
    int blocks = Math.max(1, (perLayer + 19) / 20);
    StringBuilder body = new StringBuilder(target * 260);
    StringBuilder alias = new StringBuilder();
    StringBuilder rootShapes = new StringBuilder();
    StringBuilder rootOperands = new StringBuilder();
    int[] next = {0};
    body.append("  %Arg_x = ").append(ACT).append(" parameter(0), metadata={op_name=\"x\"}\n");
    body.append("  %zero = f32[] constant(0)\n");
    String x = "%Arg_x";
    for (int l = 0; l < layers; l++) {
      String w = "%Arg_w" + l;
      body.append("  ").append(w).append(" = ").append(W).append(" parameter(").append(l + 1)
          .append("), sharding={replicated}, metadata={op_name=\"params['layers_").append(l)
          .append("']['kernel']\"}\n");
      String fwd = "jit(train_step)/jit(main)/jvp(Transformer)/layers_" + l;
      String bwd = "jit(train_step)/jit(main)/transpose(jvp(Transformer))/layers_" + l;
      String h = x;
      for (int b = 0; b < blocks / 2; b++) {
        h = block(body, next, h, w, fwd);
      }
      String g = h;
      for (int b = blocks / 2; b < blocks; b++) {
        g = block(body, next, g, w, bwd);
      }
      String upd = "%update." + l;
      String grad = "%grad." + next[0]++;
      body.append(String.format(Locale.ROOT, "  %s = %s dot(%s, %s), lhs_contracting_dims={0,1}, "
          + "rhs_contracting_dims={0,1}, metadata={op_type=\"dot_general\" op_name=\"%s/mlp/"
          + "dot_general\" source_file=\"/src/model.py\" source_line=%d}%n", grad, W, x, g, bwd,
          100 + l));
      body.append(String.format(Locale.ROOT, "  %s = %s subtract(%s, %s), metadata={op_type=\"sub\""
          + " op_name=\"jit(train_step)/jit(main)/sgd/sub\" source_file=\"/src/optim.py\" "
          + "source_line=12}%n", upd, W, w, grad));
      if (l > 0) {
        alias.append(", ");
        rootShapes.append(", ");
        rootOperands.append(", ");
      }
      alias.append('{').append(l).append("}: (").append(l + 1).append(", {}, may-alias)");
      rootShapes.append(W);
      rootOperands.append(upd);
      x = h;
    }
    StringBuilder sb = new StringBuilder(body.length() + 4096);
    sb.append("HloModule jit_train_step, is_scheduled=true, input_output_alias={ ").append(alias)
        .append(" }\n\n");
    sb.append("%region_add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        + "  %b = f32[] parameter(1)\n  ROOT %add = f32[] add(%a, %b)\n}\n\n");
    sb.append("ENTRY %main {\n").append(body);
    sb.append("  ROOT %tuple = (").append(rootShapes).append(") tuple(").append(rootOperands)
        .append(")\n}\n");
    return sb.toString();
  }

  /** About 20 instructions of attention- and MLP-like ops on one activation. */
  private static String block(StringBuilder sb, int[] next, String in, String w, String scope) {
    String[] ops = {"attn/q/dot_general", "attn/k/dot_general", "attn/softmax/exp",
        "attn/softmax/reduce_sum", "mlp/gelu/tanh", "mlp/out/dot_general", "ln/rsqrt"};
    String cur = in;
    for (int k = 0; k < 2; k++) {
      String q = "%dot." + next[0]++;
      line(sb, q, ACT, "dot(" + cur + ", " + w + "), lhs_contracting_dims={2}, "
          + "rhs_contracting_dims={0}", "dot_general", scope + "/" + ops[k]);
      String c = "%convert." + next[0]++;
      line(sb, c, "f32[8,2048,4096]{2,1,0}", "convert(" + q + ")", "convert_element_type",
          scope + "/" + ops[2]);
      String e = "%exponential." + next[0]++;
      line(sb, e, "f32[8,2048,4096]{2,1,0}", "exponential(" + c + ")", "exp", scope + "/" + ops[2]);
      String r = "%reduce." + next[0]++;
      line(sb, r, ROW, "reduce(" + e + ", %zero), dimensions={2}, to_apply=%region_add",
          "reduce_sum", scope + "/" + ops[3]);
      String rs = "%rsqrt." + next[0]++;
      line(sb, rs, ROW, "rsqrt(" + r + ")", "rsqrt", scope + "/" + ops[6]);
      String bc = "%broadcast." + next[0]++;
      line(sb, bc, "f32[8,2048,4096]{2,1,0}", "broadcast(" + rs + "), dimensions={0,1}",
          "mul", scope + "/" + ops[6]);
      String m = "%multiply." + next[0]++;
      line(sb, m, "f32[8,2048,4096]{2,1,0}", "multiply(" + e + ", " + bc + ")", "mul",
          scope + "/" + ops[6]);
      String cv = "%convert." + next[0]++;
      line(sb, cv, ACT, "convert(" + m + ")", "convert_element_type", scope + "/" + ops[6]);
      String t = "%tanh." + next[0]++;
      line(sb, t, ACT, "tanh(" + cv + ")", "tanh", scope + "/" + ops[4]);
      String a = "%add." + next[0]++;
      line(sb, a, ACT, "add(" + t + ", " + cur + ")", "add", scope + "/" + ops[5]);
      cur = a;
    }
    return cur;
  }

  private static void line(StringBuilder sb, String name, String shape, String op, String type,
      String opName) {
    sb.append("  ").append(name).append(" = ").append(shape).append(' ').append(op)
        .append(", metadata={op_type=\"").append(type).append("\" op_name=\"").append(opName)
        .append("\" source_file=\"/src/model.py\" source_line=").append(40 + (name.length() % 7))
        .append("}\n");
  }
}

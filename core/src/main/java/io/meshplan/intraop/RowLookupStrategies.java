package io.meshplan.intraop;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The strategies of embedding tables: a gather that looks up rows of a rank-2 table, and the
 * scatter-add that is its transpose (the table's gradient). Other gathers and scatters are opaque.
 */
final class RowLookupStrategies {
  private final StrategyContext ctx;
  private final Graph graph;
  private final MeshEnv env;
  private final LogicalMesh mesh;

  RowLookupStrategies(StrategyContext ctx) {
    this.ctx = ctx;
    this.graph = ctx.graph();
    this.env = ctx.env();
    this.mesh = ctx.mesh();
  }

  /**
   * Whether a gather is a row lookup {@code out[i..., :] = table[idx[i...], :]} of a rank-2 table
   * (an embedding lookup, as {@code GraphBuilder.gather} writes it).
   */
  boolean isRowLookup(Instruction ins) {
    if (ins.operands().size() != 2 || !(ins.shape() instanceof TensorShape out)
        || !(graph.get(ins.operand(0)).shape() instanceof TensorShape table)
        || !(graph.get(ins.operand(1)).shape() instanceof TensorShape idx)) {
      return false;
    }
    int r = idx.rank();
    Map<String, String> a = ins.rawAttributes();
    return table.rank() == 2 && out.rank() == r + 1 && out.dim(r) == table.dim(1)
        && ("{" + r + "}").equals(a.get("offset_dims"))
        && "{0}".equals(a.get("collapsed_slice_dims")) && "{0}".equals(a.get("start_index_map"))
        && Integer.toString(r).equals(a.get("index_vector_dim"))
        && ("{1," + table.dim(1) + "}").equals(a.get("slice_sizes"));
  }

  /**
   * Whether a scatter adds rows {@code updates[i..., :]} into a rank-2 table at rows {@code
   * idx[i...]} (the transpose of a row lookup, as {@code GraphBuilder.scatterAdd} writes it).
   */
  boolean isRowScatter(Instruction ins) {
    if (ins.operands().size() != 3 || !(ins.shape() instanceof TensorShape out)
        || !(graph.get(ins.operand(1)).shape() instanceof TensorShape idx)
        || !(graph.get(ins.operand(2)).shape() instanceof TensorShape upd)) {
      return false;
    }
    int r = idx.rank();
    Map<String, String> a = ins.rawAttributes();
    return out.rank() == 2 && upd.rank() == r + 1 && upd.dim(r) == out.dim(1)
        && ("{" + r + "}").equals(a.get("update_window_dims"))
        && "{0}".equals(a.get("inserted_window_dims"))
        && "{0}".equals(a.get("scatter_dims_to_operand_dims"))
        && Integer.toString(r).equals(a.get("index_vector_dim"))
        && a.getOrDefault("to_apply", "").startsWith("%add");
  }

  /**
   * A row lookup: the indices' splits carry to the result's leading dimensions and a split of the
   * table's width to the result's last; the table's rows may be split too, over axes the result
   * does not use: each device then looks up only the rows it holds (zeros elsewhere) and the
   * result is all-reduced over those axes (Megatron-LM's vocabulary-parallel embedding, Shoeybi
   * et al. 2019, section 3).
   */
  StrategySet rowGather(Instruction ins) {
    TensorShape out = ins.tensorShape();
    TensorShape table = graph.get(ins.operand(0)).tensorShape();
    int r = out.rank() - 1;
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec o : ctx.layouts(out)) {
      int[] om = o.masks();
      int[] idxMasks = Arrays.copyOf(om, r);
      int free = ctx.allAxes() & ~o.usedAxes();
      for (int rows = free; ; rows = (rows - 1) & free) {
        if (ShardingSpec.axesProduct(rows, mesh) <= table.dim(0)) {
          ShardingSpec t = ShardingSpec.of(rows, om[r]);
          double local = o.localBytes(out, mesh);
          double comm = 0.0;
          StringBuilder name = new StringBuilder(o + " = " + t + " [" + ShardingSpec.of(idxMasks)
              + "]");
          for (int ax = 0; ax < mesh.rank(); ax++) {
            if ((rows & (1 << ax)) != 0) {
              comm += env.comm().allReduce(local, ax);
              name.append(" (allreduce @ ").append(ax).append(')');
            }
          }
          list.add(new Strategy(name.toString(), o,
              new ShardingSpec[] {t, ShardingSpec.of(idxMasks)},
              ctx.computeCost(ins, o.totalTiles(mesh)), comm, local));
        }
        if (rows == 0) {
          break;
        }
      }
    }
    return new StrategySet(list, -1, false);
  }

  /**
   * A row scatter-add: the result (the table's gradient) may take any layout; the updates keep the
   * result's width split and may split their leading (token) dimensions over the other axes, the
   * indices alike. Each device adds its tokens' rows into the rows it holds; token splits leave
   * partial sums that are all-reduced over their axes (the data-parallel gradient reduction of an
   * embedding table).
   */
  StrategySet rowScatterAdd(Instruction ins) {
    TensorShape out = ins.tensorShape();
    TensorShape upd = graph.get(ins.operand(2)).tensorShape();
    int r = upd.rank() - 1;
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec o : ctx.layouts(out)) {
      for (ShardingSpec u : ctx.layouts(upd)) {
        int tokenAxes = u.usedAxes() & ~u.axes(r);
        if (u.axes(r) != o.axes(1) || (tokenAxes & o.usedAxes()) != 0) {
          continue;
        }
        int[] idxMasks = Arrays.copyOf(u.masks(), r);
        double local = o.localBytes(out, mesh);
        double comm = 0.0;
        StringBuilder name = new StringBuilder(o + " = scatter " + u);
        for (int ax = 0; ax < mesh.rank(); ax++) {
          if ((tokenAxes & (1 << ax)) != 0) {
            comm += env.comm().allReduce(local, ax);
            name.append(" (allreduce @ ").append(ax).append(')');
          }
        }
        list.add(new Strategy(name.toString(), o,
            new ShardingSpec[] {o, ShardingSpec.of(idxMasks), u},
            ctx.computeCost(ins, o.totalTiles(mesh)), comm, local));
      }
    }
    return new StrategySet(list, -1, false);
  }
}

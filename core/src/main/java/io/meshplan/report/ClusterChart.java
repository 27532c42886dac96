package io.meshplan.report;

import static io.meshplan.report.HtmlWriter.fmt;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.sim.StageResult;
import java.util.Arrays;

/**
 * Draws the cluster: one box per node, one square per GPU, coloured by the pipeline stage that
 * uses it. Device ids are row-major over nodes, and a stage's submesh of {@code n x m} GPUs
 * starting at device {@code f} holds devices {@code f + r * gpusPerNode + c}.
 */
final class ClusterChart {
  /** Above this many GPUs, one square stands for a whole node (coloured by its first GPU). */
  static final int MAX_GPU_CELLS = 8192;
  private static final int WIDTH = 1200;

  private ClusterChart() {}

  /**
   * The stage of every device, or -1.
   *
   * @param side the plan
   * @param nodes nodes of the cluster
   * @param gpusPerNode GPUs per node
   * @return an array indexed by device id
   */
  static int[] stageOfDevice(ReportSide side, int nodes, int gpusPerNode) {
    int[] stage = new int[Math.multiplyExact(nodes, gpusPerNode)];
    Arrays.fill(stage, -1);
    if (side.plan().isPresent()) {
      PipelinePlan plan = side.plan().get();
      for (int s = 0; s < plan.pipelineStages(); s++) {
        StagePlan p = plan.stages().get(s);
        for (int r = 0; r < p.submeshNodes(); r++) {
          for (int c = 0; c < p.submeshGpus(); c++) {
            long d = p.firstDevice() + (long) r * gpusPerNode + c;
            if (d < stage.length) {
              stage[(int) d] = s;
            }
          }
        }
      }
    } else {
      int next = 0;
      for (StageResult g : side.simulation().stages()) {
        for (int i = 0; i < g.devices() && next < stage.length; i++) {
          stage[next++] = g.group();
        }
      }
    }
    return stage;
  }

  static void draw(HtmlWriter w, ReportSide side, int nodes, int gpusPerNode, String id) {
    int[] stage = stageOfDevice(side, nodes, gpusPerNode);
    boolean perNode = stage.length > MAX_GPU_CELLS;
    int cells = perNode ? 1 : gpusPerNode;
    // Bigger squares for small clusters, so a 4-node picture does not look like a thumbnail.
    int cell = stage.length <= 64 ? 24 : stage.length <= 256 ? 16 : stage.length <= 512 ? 12 : 8;
    int boxW = cells * (cell + 2) + 6;
    int boxH = cell + 19;
    int perRow = Math.max(1, WIDTH / (boxW + 6));
    int rows = (nodes + perRow - 1) / perRow;
    int height = rows * (boxH + 6) + 4;
    w.open("svg", "id", id, "class", "chart", "xmlns", "http://www.w3.org/2000/svg",
        "viewBox", fmt("0 0 %d %d", WIDTH, height), "role", "img",
        "aria-label", "GPUs coloured by pipeline stage");
    for (int n = 0; n < nodes; n++) {
      int x = (n % perRow) * (boxW + 6) + 2;
      int y = (n / perRow) * (boxH + 6) + 2;
      w.open("g", "class", "node", "data-node", Integer.toString(n));
      w.empty("rect", "x", Integer.toString(x), "y", Integer.toString(y), "width",
          Integer.toString(boxW), "height", Integer.toString(boxH), "class", "nodebox");
      w.element("text", "node " + n, "x", Integer.toString(x + 3), "y", Integer.toString(y + 11),
          "class", "small");
      for (int c = 0; c < cells; c++) {
        int dev = n * gpusPerNode + c;
        int s = stage[dev];
        String tip = perNode ? "node " + n + (s >= 0 ? ": stage " + s : ": unused")
            : "GPU " + dev + " (node " + n + ", local " + c + ")"
                + (s >= 0 ? ": stage " + s : ": unused");
        w.empty("rect", "x", Integer.toString(x + 3 + c * (cell + 2)), "y",
            Integer.toString(y + 15), "width", Integer.toString(cell), "height",
            Integer.toString(cell), "fill", s >= 0 ? Palette.stage(s) : Palette.UNUSED,
            "class", "gpu", "data-stage", Integer.toString(s), "data-tip", tip);
      }
      w.close("g");
    }
    w.close("svg");
    if (perNode) {
      w.element("p", "The cluster has " + stage.length + " GPUs (more than " + MAX_GPU_CELLS
          + "), so each square is a whole node, coloured by the stage of its first GPU.",
          "class", "note");
    }
  }
}

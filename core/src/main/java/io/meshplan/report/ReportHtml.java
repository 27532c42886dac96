package io.meshplan.report;

import static io.meshplan.report.HtmlWriter.fmt;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.CommVolume;
import io.meshplan.sim.MemoryUse;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageResult;
import io.meshplan.sim.TimeBreakdown;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Renders a plan and its simulation as one self-contained HTML page: inline CSS and SVG, no
 * external resource, readable with JavaScript off (a few lines of inline script only show hover
 * details). Sections: headline numbers, the pipeline timeline drawn from the simulator's events
 * (Narayanan et al. SC'21 draw schedules this way), memory per stage against capacity, the time
 * breakdown with exposed communication time and communication volume per mesh axis, the cluster
 * coloured by stage, and the shardings of each stage's largest tensors; with a second plan, both
 * side by side.
 *
 * <p>The output is deterministic: numbers use {@link java.util.Locale#ROOT}, stages and events
 * come in index and timeline order.
 */
public final class ReportHtml {
  /** Largest tensors listed per stage in the sharding table. */
  static final int MAX_TENSORS = 8;
  private static final double GIB = 1024.0 * 1024 * 1024;
  private static final String CSS = String.join("\n",
      "body{font:14px/1.4 system-ui,sans-serif;color:#222;margin:16px auto;max-width:1248px;"
          + "padding:0 8px}",
      "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 6px;"
          + "border-bottom:1px solid #ddd}h3{font-size:15px;margin:12px 0 4px}",
      "svg.chart{width:100%;height:auto;display:block}",
      "table{border-collapse:collapse;margin:6px 0;font-size:13px}",
      "td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}",
      "td.n{text-align:right;font-variant-numeric:tabular-nums}",
      "code{font-size:12px}.note{color:#555;font-size:12px}.sub{color:#555;margin:0}",
      ".cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}",
      ".cols table{font-size:11px}",
      ".swatch{display:inline-block;width:11px;height:11px;margin-right:4px;"
          + "border:1px solid #888}",
      ".nodebox{fill:#f6f6f6;stroke:#999}.gpu{stroke:#555;stroke-width:0.5}",
      ".small{font-size:10px;fill:#444}.label{font-size:12px;fill:#222}",
      ".evlabel{font-size:10px;fill:#fff;text-anchor:middle}",
      ".tick,.grid{stroke:#ccc;stroke-width:0.5}.capacity{stroke:#c00;stroke-dasharray:6 3;"
          + "stroke-width:1.5}",
      "#tip{position:absolute;display:none;background:#fff;border:1px solid #888;padding:2px 6px;"
          + "font-size:12px;pointer-events:none}",
      "@media print{body{max-width:none;margin:0}.cols{display:block}section{break-inside:"
          + "avoid}#tip{display:none}}");
  // Written without the characters < and &, so that the page stays well-formed XML.
  private static final String SCRIPT = "document.addEventListener('mousemove',function(e){"
      + "var t=e.target.closest?e.target.closest('[data-tip]'):null;"
      + "var b=document.getElementById('tip');if(!t){b.style.display='none';return;}"
      + "b.textContent=t.getAttribute('data-tip');b.style.display='block';"
      + "b.style.left=(e.pageX+12)+'px';b.style.top=(e.pageY+12)+'px';});";

  private ReportHtml() {}

  /**
   * Renders the page.
   *
   * @param in the plans, simulations and cluster
   * @return the HTML text
   */
  public static String write(ReportInput in) {
    HtmlWriter w = new HtmlWriter();
    w.raw("<!DOCTYPE html>\n");
    w.open("html", "lang", "en");
    w.open("head");
    w.empty("meta", "charset", "utf-8");
    w.element("title", "meshplan report: " + in.main().title());
    w.open("style").raw(CSS).close("style");
    w.close("head");
    w.open("body");
    w.element("h1", "meshplan report");
    w.element("p", in.main().title(), "class", "sub");
    in.compare().ifPresent(c -> w.element("p", "compared with: " + c.title(), "class", "sub"));
    headline(w, in);
    if (in.compare().isPresent()) {
      w.open("div", "class", "cols", "id", "compare");
      w.open("div", "class", "side");
      w.element("h2", "A: " + in.main().title());
      side(w, in, in.main(), "");
      w.close("div");
      w.open("div", "class", "side");
      w.element("h2", "B: " + in.compare().get().title());
      side(w, in, in.compare().get(), "b-");
      w.close("div");
      w.close("div");
    } else {
      side(w, in, in.main(), "");
    }
    w.element("div", "", "id", "tip");
    w.open("script").raw(SCRIPT).close("script");
    w.close("body");
    w.close("html");
    return w.toString();
  }

  private static void headline(HtmlWriter w, ReportInput in) {
    List<ReportSide> sides = new ArrayList<>();
    sides.add(in.main());
    in.compare().ifPresent(sides::add);
    w.open("section", "id", "headline");
    w.element("h2", "Headline numbers");
    w.open("table");
    w.open("tr").element("th", "");
    if (sides.size() > 1) {
      w.element("th", "A").element("th", "B");
    } else {
      w.element("th", "value");
    }
    w.close("tr");
    row(w, "model", sides, s -> s.plan().map(ReportHtml::source).orElse("see title"));
    row(w, "cluster", sides, s -> s.plan().map(PipelinePlan::cluster).orElse(
        in.clusterOf(s).nodes() + "x" + in.clusterOf(s).gpusPerNode()));
    row(w, "GPUs used", sides, s -> Integer.toString(gpus(s)) + " of "
        + (long) in.clusterOf(s).nodes() * in.clusterOf(s).gpusPerNode());
    row(w, "stages x microbatches", sides, s -> s.simulation().stages().size() + " x "
        + s.simulation().microbatches() + " (" + s.simulation().schedule() + ")");
    row(w, "iteration time", sides, s -> fmt("%.4f s", s.simulation().iterationSeconds()));
    row(w, "tokens/s", sides, s -> s.plan().flatMap(PipelinePlan::hloModule).isPresent()
        ? fmt("%.2f microbatches/s", s.simulation().tokensPerSecond())
        : fmt("%.0f", s.simulation().tokensPerSecond()));
    row(w, "TFLOP/s per GPU (model / hardware)", sides, s -> fmt("%.1f / %.1f",
        s.simulation().tflopsPerGpu(), s.simulation().hardwareTflopsPerGpu()));
    row(w, "MFU", sides, s -> fmt("%.1f%%", 100 * s.simulation().mfu()));
    row(w, "peak memory per GPU", sides, s -> fmt("%.2f GiB (stage %d) of %.1f GiB",
        s.simulation().peakMemoryBytesPerGpu() / GIB, s.simulation().memoryGroup(),
        in.clusterOf(s).gpuMemoryBytes() / GIB));
    row(w, "communication per GPU per iteration (mean)", sides, s -> {
      CommVolume c = s.simulation().commBytesPerGpu();
      return fmt("tensor-parallel %.2f GiB, data-parallel %.2f GiB, pipeline %.2f GiB",
          c.tensorParallelBytes() / GIB, c.dataParallelBytes() / GIB, c.pipelineBytes() / GIB)
          + (c.expertParallelBytes() > 0 ? fmt(", expert-parallel %.2f GiB",
              c.expertParallelBytes() / GIB) : "")
          + (c.contextParallelBytes() > 0 ? fmt(", context-parallel %.2f GiB",
              c.contextParallelBytes() / GIB) : "");
    });
    row(w, "where the time goes (critical stage)", sides, s -> {
      SimulationResult r = s.simulation();
      TimeBreakdown b = r.breakdown();
      double t = r.iterationSeconds() > 0 ? r.iterationSeconds() : 1;
      return fmt("stage %d: compute %.1f%% (recompute %.1f%%), exposed communication %.1f%%,"
          + " bubble %.1f%%, optimizer %.1f%%", r.criticalGroup(), 100 * b.computeSeconds() / t,
          100 * b.recomputeSeconds() / t, 100 * b.exposedCommunicationSeconds() / t,
          100 * b.bubbleSeconds() / t, 100 * b.optimizerSeconds() / t);
    });
    w.close("table");
    w.close("section");
  }

  private static int gpus(ReportSide s) {
    int n = 0;
    for (StageResult g : s.simulation().stages()) {
      n += g.devices();
    }
    return n;
  }

  private static void row(HtmlWriter w, String label, List<ReportSide> sides,
      java.util.function.Function<ReportSide, String> value) {
    w.open("tr").element("th", label);
    for (ReportSide s : sides) {
      w.element("td", value.apply(s));
    }
    w.close("tr");
  }

  private static void side(HtmlWriter w, ReportInput in, ReportSide s, String prefix) {
    SimulationResult sim = s.simulation();
    w.open("section", "id", prefix + "timeline-section");
    w.element("h2", "1. Pipeline timeline (one iteration)");
    TimelineChart.draw(w, sim, prefix + "timeline");
    w.close("section");
    w.open("section", "id", prefix + "memory-section");
    w.element("h2", "2. Peak memory per GPU by stage");
    MemoryChart.draw(w, sim, in.clusterOf(s).gpuMemoryBytes(), prefix + "memory");
    memoryTable(w, sim);
    w.close("section");
    w.open("section", "id", prefix + "breakdown-section");
    w.element("h2", "3. Where the time goes");
    BreakdownChart.draw(w, sim, prefix + "breakdown");
    commTable(w, sim);
    w.close("section");
    w.open("section", "id", prefix + "cluster-section");
    w.element("h2", "4. Cluster: GPUs by pipeline stage");
    ClusterChart.draw(w, s, in.clusterOf(s).nodes(), in.clusterOf(s).gpusPerNode(),
        prefix + "cluster");
    stageTable(w, s);
    w.close("section");
    w.open("section", "id", prefix + "sharding");
    w.element("h2", "5. Sharding of the largest tensors");
    shardingTables(w, s.plan());
    w.close("section");
    s.run().ifPresent(run -> timeToTrain(w, run, prefix));
  }

  /** The time to train with interruptions, and its ETTR against cluster size. */
  private static void timeToTrain(HtmlWriter w, TrainingRun run, String prefix) {
    io.meshplan.sim.Goodput g = run.goodput();
    double wall = g.expectedSeconds(run.interval());
    long segments = g.iterations() / run.interval()
        + (g.iterations() % run.interval() > 0 ? 1 : 0);
    double prod = g.productiveSeconds();
    double ckpt = segments * g.checkpointSeconds();
    w.open("section", "id", prefix + "time-to-train");
    w.element("h2", "6. Time to train, with interruptions");
    w.open("table");
    String[][] rows = {
      {"iterations", Long.toString(g.iterations())},
      {"mean time between interruptions", fmt("%.2f h", g.mtbfSeconds() / 3600)},
      {"checkpoint", fmt("every %d iterations, %.1f s to write (Young %.1f min, Daly %.1f min)",
          run.interval(), g.checkpointSeconds(), g.youngSeconds() / 60, g.dalySeconds() / 60)},
      {"productive", fmt("%.2f days", prod / 86400)},
      {"checkpoints", fmt("%.2f days", ckpt / 86400)},
      {"lost work and restarts", Double.isFinite(wall)
          ? fmt("%.2f days", (wall - prod - ckpt) / 86400) : "unbounded"},
      {"expected wall-clock", Double.isFinite(wall) ? fmt("%.2f days", wall / 86400)
          : "unbounded"},
      {"expected interruptions", Double.isFinite(wall) ? fmt("%.0f", g.interruptions(wall))
          : "unbounded"},
      {"effective training time ratio", Double.isFinite(wall) ? fmt("%.1f%%", 100 * prod / wall)
          : "0"},
    };
    for (String[] r : rows) {
      w.open("tr").element("th", r[0]).element("td", r[1]).close("tr");
    }
    w.close("table");
    w.element("p", "The same run on other cluster sizes, the iteration time scaled ideally "
        + "(interruptions alone):", "class", "small");
    EttrChart.draw(w, run, prefix + "ettr");
    w.close("section");
  }

  private static void stageTable(HtmlWriter w, ReportSide s) {
    w.open("table", "class", "stages");
    w.open("tr");
    for (String h : List.of("stage", "layers", "GPUs (submesh)", "logical mesh dp x mp",
        "recompute / ZeRO", "fwd + bwd per microbatch")) {
      w.element("th", h);
    }
    w.close("tr");
    for (StageResult g : s.simulation().stages()) {
      w.open("tr");
      w.open("td").raw("<span class=\"swatch\" style=\"background:" + Palette.stage(g.group())
          + "\"></span>").text(Integer.toString(g.group())).close("td");
      Optional<StagePlan> p = s.plan().map(pl -> pl.stages().get(g.group()));
      w.element("td", s.plan().map(pl -> pl.layersOf(g.group()))
          .orElse("chunks " + g.virtualStages()));
      w.element("td", p.map(x -> x.devices() + " (" + x.submeshNodes() + " x "
          + x.submeshGpus() + " from GPU " + x.firstDevice() + ")")
          .orElse(Integer.toString(g.devices())), "class", "n");
      w.element("td", p.map(ReportHtml::meshWords)
          .orElse(g.dataParallel() + " x " + g.tensorParallel()));
      w.element("td", p.map(x -> x.recompute().name().toLowerCase(java.util.Locale.ROOT)
          + (x.recomputeLayers() > 0 ? " " + x.recomputeLayers() + "/" + x.layerCount() : "")
          + (x.sequenceParallel() ? " + seq-parallel" : "") + " / " + x.zeroStage())
          .orElse("-"));
      w.element("td", s.plan().map(pl -> {
        double fwd = 0;
        double bwd = 0;
        for (StagePlan c : pl.chunksOf(g.group())) {
          fwd += c.forwardSeconds();
          bwd += c.backwardSeconds();
        }
        return fmt("%.2f + %.2f ms", fwd * 1e3, bwd * 1e3);
      }).orElse("-"), "class", "n");
      w.close("tr");
    }
    w.close("table");
  }

  private static void memoryTable(HtmlWriter w, SimulationResult sim) {
    w.open("table", "class", "memtable");
    w.open("tr").element("th", "stage");
    for (String part : MemoryChart.PARTS) {
      w.element("th", part + " GiB");
    }
    w.element("th", "peak GiB").element("th", "microbatches in flight").close("tr");
    for (StageResult g : sim.stages()) {
      MemoryUse m = g.memory();
      w.open("tr").element("td", Integer.toString(g.group()));
      for (double v : MemoryChart.parts(m)) {
        w.element("td", fmt("%.2f", v / GIB), "class", "n");
      }
      w.element("td", fmt("%.2f", m.totalBytes() / GIB), "class", "n");
      w.element("td", Integer.toString(g.timing().peakInFlightMicrobatches()), "class", "n");
      w.close("tr");
    }
    w.close("table");
  }

  /**
   * A stage's mesh in words: data x tensor parallelism, with the context-parallel and expert
   * groups when it has them.
   */
  private static String meshWords(StagePlan x) {
    StringBuilder b = new StringBuilder().append(x.dataParallel()).append(" x ");
    if (x.contextParallel() > 1) {
      b.append(x.contextParallel()).append(" (context-parallel, ")
          .append(switch (x.cpExchange()) {
            case ALL_GATHER -> "all-gather";
            case ALL_TO_ALL -> "all-to-all";
            case P2P -> "ring";
          }).append(") x ");
    }
    b.append(x.tensorParallel());
    if (x.expertParallel() > 1 || x.expertTensorParallel() > 1) {
      b.append("; experts EP ").append(x.expertParallel()).append(" x ETP ")
          .append(x.expertTensorParallel());
    }
    return b.toString();
  }

  private static void commTable(HtmlWriter w, SimulationResult sim) {
    boolean exchange = sim.stages().stream()
        .anyMatch(g -> g.timing().breakdown().exchangeSeconds() > 0);
    w.open("table", "class", "commtable");
    w.open("tr");
    List<String> heads = new java.util.ArrayList<>(List.of("stage",
        "tensor-parallel (mp axis) s", "pipeline (between stages) s",
        "data-parallel (dp axis) s", "bubble s", "iteration s", "tensor-parallel GiB per GPU",
        "pipeline GiB per GPU", "data-parallel GiB per GPU"));
    if (exchange) {
      heads.add(2, "expert all-to-all and context ring s (share of iteration)");
      heads.add("expert and context exchange GiB per GPU");
    }
    for (String h : heads) {
      w.element("th", h);
    }
    w.close("tr");
    for (StageResult g : sim.stages()) {
      TimeBreakdown b = g.timing().breakdown();
      w.open("tr", "data-group", Integer.toString(g.group()));
      w.element("td", Integer.toString(g.group()));
      w.element("td", fmt("%.4f", b.tensorParallelSeconds()), "class", "n");
      if (exchange) {
        w.element("td", fmt("%.4f", b.exchangeSeconds()) + " (" + fmt("%.1f",
            100 * b.exchangeSeconds() / b.totalSeconds()) + "%)", "class", "n");
      }
      for (double v : new double[] {b.pipelineSeconds(),
          b.dataParallelSeconds(), b.bubbleSeconds(), b.totalSeconds()}) {
        w.element("td", fmt("%.4f", v), "class", "n");
      }
      CommVolume c = g.commBytesPerGpu();
      String[] axes = exchange
          ? new String[] {"tensorParallel", "pipeline", "dataParallel", "exchange"}
          : new String[] {"tensorParallel", "pipeline", "dataParallel"};
      double[] bytes = {c.tensorParallelBytes(), c.pipelineBytes(), c.dataParallelBytes(),
          c.expertParallelBytes() + c.contextParallelBytes()};
      for (int a = 0; a < axes.length; a++) {
        w.element("td", fmt("%.2f", bytes[a] / GIB), "class", "n bytes", "data-axis", axes[a],
            "data-bytes", Double.toString(bytes[a]));
      }
      w.close("tr");
    }
    w.close("table");
    w.element("p", "Seconds are the exposed communication time the simulator reports per "
        + "iteration (time not hidden behind compute). Volumes are the bytes one GPU of the stage"
        + " sends per iteration, all of it, hidden or not: collectives counted as nccl-tests "
        + "counts bus bytes (a ring all-reduce of S bytes over n GPUs sends 2(n-1)/n x S per GPU,"
        + " an all-gather or reduce-scatter (n-1)/n x S), pipeline activations and their "
        + "gradients once at the sender.", "class", "note");
  }

  private static void shardingTables(HtmlWriter w, Optional<PipelinePlan> plan) {
    if (plan.isEmpty()) {
      w.element("p", "No plan was given for this side, so no per-stage sharding is listed.",
          "class", "note");
      return;
    }
    PipelinePlan pl = plan.get();
    for (int i = 0; i < pl.pipelineStages(); i++) {
      StagePlan st = pl.stages().get(i);
      w.element("h3", "stage " + i + " (layers " + pl.layersOf(i)
          + ", mesh " + meshWords(st) + ")");
      if (st.tensors().isEmpty()) {
        w.element("p", "no tensors recorded", "class", "note");
        continue;
      }
      w.open("table", "class", "shardtable");
      w.open("tr");
      for (String h : List.of("tensor", "shape", "XLA sharding", "in words")) {
        w.element("th", h);
      }
      w.close("tr");
      int n = Math.min(MAX_TENSORS, st.tensors().size());
      for (int k = 0; k < n; k++) {
        TensorSharding t = st.tensors().get(k);
        w.open("tr").element("td", t.name());
        w.open("td").element("code", t.shape()).close("td");
        w.open("td").element("code", t.sharding()).close("td");
        w.element("td", t.words()).close("tr");
      }
      w.close("table");
      if (st.tensors().size() > n) {
        w.element("p", (st.tensors().size() - n) + " smaller tensors not listed", "class",
            "note");
      }
    }
  }

  /** What a plan trains, in words: the model with its layers and sequence, or the HLO module. */
  private static String source(PipelinePlan p) {
    if (p.source() instanceof io.meshplan.plan.PlanSource.HloModule h) {
      return h.title() + " (" + h.path() + "), " + h.layers() + " layers";
    }
    io.meshplan.model.ModelSpec m = p.model();
    return m.name() + ", " + m.layers() + " layers, sequence " + m.seq()
        + (m.lora().on() ? ", fine-tuned with " + m.lora().words() + " ("
            + String.format(java.util.Locale.ROOT, "%,d", m.trainableParameterCount())
            + " trainable parameters)" : "");
  }
}

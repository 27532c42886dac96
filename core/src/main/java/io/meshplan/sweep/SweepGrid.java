package io.meshplan.sweep;

import io.meshplan.model.Overlaps;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;

/**
 * The axes of a capacity sweep; its points are their Cartesian product. Points are numbered in
 * the order of the axes as listed here, the last axis varying fastest: model, sequence length,
 * GPU type, fabric, cluster shape, global batch, microbatches, gradient-reduction overlap.
 *
 * @param models model preset names, and the names of the config.json models (as the grid wrote
 *     their paths), which {@code configModels} holds
 * @param seqs tokens per sequence
 * @param gpus GPU catalog names
 * @param fabrics fabric catalog names; empty for each GPU's default fabric
 * @param clusters cluster shapes
 * @param globalBatches sequences per iteration
 * @param microbatches microbatches per iteration, 0 for the planner's choice
 * @param overlaps what the framework overlaps and fuses, each a point of the grid
 * @param attention how attention runs: {@code auto}, {@code flash}, {@code unfused}
 * @param dtypes training precisions: {@code auto} (each preset's), {@code bf16}, {@code f16},
 *     {@code f32}, {@code fp8}
 * @param configModels the models of {@code models} read from a config.json, by their name there
 * @param hardware the catalog {@code gpus} and {@code fabrics} name
 */
public record SweepGrid(List<String> models, List<Integer> seqs, List<String> gpus,
    List<String> fabrics, List<Shape> clusters, List<Integer> globalBatches,
    List<Integer> microbatches, List<Overlaps> overlaps, List<String> attention,
    List<String> dtypes, java.util.Map<String, ConfigModel> configModels,
    SweepHardware hardware) {
  /**
   * A grid on meshplan's own catalog.
   *
   * @param models model preset names and config.json model names
   * @param seqs tokens per sequence
   * @param gpus GPU catalog names
   * @param fabrics fabric catalog names; empty for each GPU's default fabric
   * @param clusters cluster shapes
   * @param globalBatches sequences per iteration
   * @param microbatches microbatches per iteration, 0 for the planner's choice
   * @param overlaps what the framework overlaps and fuses
   * @param attention how attention runs
   * @param dtypes training precisions
   * @param configModels the config.json models by name
   */
  public SweepGrid(List<String> models, List<Integer> seqs, List<String> gpus,
      List<String> fabrics, List<Shape> clusters, List<Integer> globalBatches,
      List<Integer> microbatches, List<Overlaps> overlaps, List<String> attention,
      List<String> dtypes, java.util.Map<String, ConfigModel> configModels) {
    this(models, seqs, gpus, fabrics, clusters, globalBatches, microbatches, overlaps,
        attention, dtypes, configModels, SweepHardware.SHIPPED);
  }

  /**
   * A model of the grid read from a Hugging Face config.json.
   *
   * @param file the file read
   * @param spec the model
   */
  public record ConfigModel(java.nio.file.Path file, io.meshplan.model.ModelSpec spec) {
    /** Checks the fields. */
    public ConfigModel {
      Require.nonNull(file, "file");
      Require.nonNull(spec, "spec");
    }
  }

  /**
   * A grid of presets.
   *
   * @param models preset names
   * @param seqs tokens per sequence
   * @param gpus GPU catalog names
   * @param fabrics fabric catalog names; empty for each GPU's default fabric
   * @param clusters cluster shapes
   * @param globalBatches sequences per iteration
   * @param microbatches microbatches per iteration, 0 for the planner's choice
   * @param overlaps what the framework overlaps and fuses
   * @param attention how attention runs
   * @param dtypes training precisions
   */
  public SweepGrid(List<String> models, List<Integer> seqs, List<String> gpus,
      List<String> fabrics, List<Shape> clusters, List<Integer> globalBatches,
      List<Integer> microbatches, List<Overlaps> overlaps, List<String> attention,
      List<String> dtypes) {
    this(models, seqs, gpus, fabrics, clusters, globalBatches, microbatches, overlaps,
        attention, dtypes, java.util.Map.of());
  }

  /**
   * The config.json models by name, for the points' task.
   *
   * @return name to model
   */
  public java.util.Map<String, io.meshplan.model.ModelSpec> configSpecs() {
    java.util.Map<String, io.meshplan.model.ModelSpec> out = new java.util.TreeMap<>();
    configModels.forEach((name, c) -> out.put(name, c.spec()));
    return out;
  }

  /**
   * A grid in each preset's precision.
   *
   * @param models preset names
   * @param seqs tokens per sequence
   * @param gpus GPU catalog names
   * @param fabrics fabric catalog names; empty for each GPU's default fabric
   * @param clusters cluster shapes
   * @param globalBatches sequences per iteration
   * @param microbatches microbatches per iteration, 0 for the planner's choice
   * @param overlaps what the framework overlaps and fuses
   * @param attention how attention runs
   */
  public SweepGrid(List<String> models, List<Integer> seqs, List<String> gpus,
      List<String> fabrics, List<Shape> clusters, List<Integer> globalBatches,
      List<Integer> microbatches, List<Overlaps> overlaps, List<String> attention) {
    this(models, seqs, gpus, fabrics, clusters, globalBatches, microbatches, overlaps,
        attention, List.of("auto"));
  }

  /**
   * A cluster shape.
   *
   * @param nodes nodes
   * @param gpusPerNode GPUs per node
   */
  public record Shape(int nodes, int gpusPerNode) {
    /** Validates the counts. */
    public Shape {
      Require.positive(nodes, "nodes");
      Require.positive(gpusPerNode, "GPUs per node");
    }
  }

  /** The most points a grid may have. */
  public static final int MAX_POINTS = 100_000;

  /** Copies the lists and checks the point count. */
  public SweepGrid {
    models = List.copyOf(models);
    seqs = List.copyOf(seqs);
    gpus = List.copyOf(gpus);
    fabrics = List.copyOf(fabrics);
    clusters = List.copyOf(clusters);
    globalBatches = List.copyOf(globalBatches);
    microbatches = List.copyOf(microbatches);
    overlaps = List.copyOf(overlaps);
    attention = List.copyOf(attention);
    dtypes = List.copyOf(dtypes);
    configModels = java.util.Map.copyOf(configModels);
    Require.nonNull(hardware, "hardware");
    Require.that(models.containsAll(configModels.keySet()),
        "every config.json model of a grid is one of its models");
    long n = 1;
    for (int size : new int[] {models.size(), seqs.size(), gpus.size(),
        Math.max(1, fabrics.size()), clusters.size(), globalBatches.size(), microbatches.size(),
        overlaps.size(), attention.size(), dtypes.size()}) {
      Require.that(size > 0, "every axis of a sweep grid needs at least one value");
      n *= size;
      if (n > MAX_POINTS) {
        throw new InputException("the grid has more than " + MAX_POINTS + " points; split it "
            + "into several sweeps");
      }
    }
  }

  /**
   * The number of points.
   *
   * @return the product of the axis sizes, at most {@link #MAX_POINTS}
   */
  public int size() {
    return models.size() * seqs.size() * gpus.size() * Math.max(1, fabrics.size())
        * clusters.size() * globalBatches.size() * microbatches.size() * overlaps.size()
        * attention.size() * dtypes.size();
  }

  /**
   * The points in grid order.
   *
   * @return the points
   */
  public List<SweepPoint> points() {
    List<SweepPoint> out = new ArrayList<>(size());
    for (String m : models) {
      for (int s : seqs) {
        for (String g : gpus) {
          List<String> fs = fabrics.isEmpty() ? List.of(hardware.defaultFabric(g)) : fabrics;
          for (String f : fs) {
            for (Shape c : clusters) {
              for (int gb : globalBatches) {
                for (int mb : microbatches) {
                  for (Overlaps ov : overlaps) {
                    for (String a : attention) {
                      for (String d : dtypes) {
                        out.add(new SweepPoint(out.size(), m, s, c.nodes(), c.gpusPerNode(), g,
                            f, gb, mb, ov, a, d));
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    return out;
  }
}

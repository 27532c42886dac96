package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.RuntimeSpace;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;

/**
 * The export targets as launch checks for the planner ({@link LaunchCheck}): what a target can
 * launch is exactly what its writer writes ({@link Exporter#missing(ExportTarget, ExportInput)},
 * {@link Exporter#export(ExportTarget, PipelinePlan, ClusterSpec)}), so that a plan for a target
 * always exports to it. Megatron-LM, torchtitan (its main branch) and DeepSpeed run one
 * Megatron-style configuration ({@link #UNIFORM}); Alpa runs each stage as planned ({@link
 * AlpaPipeshard#SPACE}).
 */
public final class LaunchChecks {
  /**
   * The space of a target whose stages form one configuration: every setting, which its writer
   * then judges configuration by configuration.
   */
  public static final RuntimeSpace UNIFORM = new RuntimeSpace(true,
      EnumSet.allOf(io.meshplan.model.Recompute.class), true, true, true,
      java.util.Set.of(0, 1, 2, 3), true, true, true, EnumSet.allOf(Attention.class), false);

  /** The targets a plan can be compared against, in the order they are shown. */
  private static final List<ExportTarget> TARGETS = List.of(ExportTarget.ALPA,
      ExportTarget.MEGATRON, ExportTarget.TORCHTITAN, ExportTarget.DEEPSPEED);

  private LaunchChecks() {}

  /**
   * One target's launch check on a cluster.
   *
   * @param target the target
   * @param cluster the cluster
   * @return the check
   */
  public static LaunchCheck of(ExportTarget target, ClusterSpec cluster) {
    return new TargetCheck(target, cluster);
  }

  /**
   * Every target's check: Alpa, Megatron-LM, torchtitan, DeepSpeed.
   *
   * @param cluster the cluster
   * @return the checks, in that order
   */
  public static List<LaunchCheck> all(ClusterSpec cluster) {
    List<LaunchCheck> out = new ArrayList<>();
    for (ExportTarget t : TARGETS) {
      out.add(of(t, cluster));
    }
    return out;
  }

  /** A target's writer, bound to a cluster. */
  private record TargetCheck(ExportTarget target, ClusterSpec cluster) implements LaunchCheck {
    TargetCheck {
      Require.nonNull(target, "target");
      Require.nonNull(cluster, "cluster");
    }

    @Override
    public String label() {
      return target.label();
    }

    @Override
    public RuntimeSpace space() {
      return target == ExportTarget.ALPA ? AlpaPipeshard.SPACE : UNIFORM;
    }

    @Override
    public Optional<String> missing(ModelSpec model, Attention attention, Overlaps overlaps) {
      return Exporter.missingJob(target, model, attention, overlaps);
    }

    @Override
    public Optional<String> missing(ModelSpec model, ParallelConfig config, Attention attention,
        Overlaps overlaps) {
      ExportInput in;
      try {
        in = new ExportInput(model, cluster, config, attention, overlaps);
      } catch (InputException e) {
        return Optional.of(e.getMessage());
      }
      return Exporter.missing(target, in);
    }

    @Override
    public Optional<String> missing(PipelinePlan plan) {
      try {
        ExportResult r = new Exporter().export(target, plan, cluster);
        return r instanceof ExportResult.NotExpressible n ? Optional.of(n.missing())
            : Optional.empty();
      } catch (InputException | InfeasibleException e) {
        return Optional.of(e.getMessage());
      }
    }
  }
}

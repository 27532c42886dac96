package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.cli.Main;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.exec.TaskExecutor;
import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.PlanResult;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import java.io.PrintWriter;
import java.io.Serializable;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One search on any executor: the same plan wherever the tasks run, within the thread bound. */
class PlannerExecutorTest {
  private static TrainingJob job(String model, int seq, String cluster, int batch) {
    ModelSpec p = Presets.get(model);
    ModelSpec m = new ModelSpec(p.name(), p.family(), p.layers(), p.hidden(), p.heads(),
        p.kvHeads(), p.ffn(), p.vocab(), seq, batch, p.dtype(), p.arch().forSequence(seq));
    // Nothing overlapped or fused: the scenarios below (one interleaved plan, a profile that
    // changes the plan's prediction) were chosen under that model.
    return TrainingJob.of(m, ClusterSpec.parse(cluster)).withGlobalBatch(batch)
        .withOverlaps(io.meshplan.model.Overlaps.NONE);
  }

  private static PipelinePlan planned(PlanResult r) {
    assertThat(r).isInstanceOf(PlanResult.Planned.class);
    return ((PlanResult.Planned) r).plan();
  }

  /**
   * Tasks shipped through Java serialization (as Spark ships them) give the in-process plan, byte
   * for byte in its JSON form, and the same simulated iteration; also for a plan the planner
   * interleaves (GPT 1.7B on 4 x 8 A100s with 32 sequences: 2 stages of 7 chunks) and for the
   * same job restricted to 1F1B.
   */
  @Test
  void sameJsonWhenTasksAreShipped() {
    int interleaved = 0;
    for (TrainingJob j : List.of(job("opt-125m", 512, "2x2:a100-40gb:ib-hdr200", 32),
        job("gpt-1.7b", 2048, "4x8:a100-80gb:ib-hdr200", 32))) {
      for (boolean interleave : new boolean[] {true, false}) {
        PlannerOptions o = PlannerOptions.defaults().withThreads(2).withInterleaving(interleave);
        PlanResult here = Planner.plan(j, Pricing.catalog(), o);
        SerializingExecutor remote = new SerializingExecutor();
        PlanResult shipped = Planner.plan(j, Pricing.catalog(), o.withExecutor(remote));
        PipelinePlan plan = planned(here);
        assertThat(PlanJson.write(planned(shipped))).isEqualTo(PlanJson.write(plan));
        assertThat(((PlanResult.Planned) shipped).simulation().iterationSeconds())
            .isEqualTo(((PlanResult.Planned) here).simulation().iterationSeconds());
        assertThat(remote.shipped()).as("one task per microbatch size at least")
            .isGreaterThan(1);
        if (plan.virtualStages() > 1) {
          interleaved++;
          assertThat(interleave).isTrue();
        }
      }
    }
    assertThat(interleaved).isEqualTo(1);
  }

  /**
   * A calibration profile travels with the tasks: planned with the profile's prices, shipped
   * tasks give the in-process plan; and the profile read back from its serialized form equals
   * the original. The profile is {@code meshplan calibrate}'s fit of the example's Alpa
   * profile_communication log (4 x 8 A100).
   */
  @Test
  void aCalibratedProfileTravelsWithTheTasks(@TempDir Path dir) {
    Path profile = dir.resolve("profile.yaml");
    int code = Main.run(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()),
        "calibrate", "examples/alpa_profile_communication_4x8_a100.txt", "--cluster",
        "4x8:a100-80gb", "--out", profile.toString());
    assertThat(code).isZero();
    Profile p = ProfileFiles.read(profile);
    assertThat(SerializingExecutor.copy(p)).isEqualTo(p);
    Pricing calibrated = Pricing.calibrated(p);
    assertThat(SerializingExecutor.copy(calibrated)).isEqualTo(calibrated);
    // OPT-1.3B, whose plan leaves communication the profile prices in the iteration (OPT-125M
    // plans to ZeRO-3 here, its collectives under compute at either price: one time for both).
    TrainingJob j = job("opt-1.3b", 512, "4x8:a100-80gb", 64);
    PlannerOptions o = PlannerOptions.defaults().withThreads(2);
    PipelinePlan here = planned(Planner.plan(j, calibrated, o));
    PipelinePlan shipped = planned(Planner.plan(j, calibrated,
        o.withExecutor(new SerializingExecutor())));
    assertThat(PlanJson.write(shipped)).isEqualTo(PlanJson.write(here));
    // The profile's prices are not the catalog's: the same job plans to another prediction.
    PipelinePlan catalog = planned(Planner.plan(j, Pricing.catalog(), o));
    assertThat(catalog.prediction().iterationSeconds())
        .isNotEqualTo(here.prediction().iterationSeconds());
  }

  /**
   * {@code threads} bounds every solver thread: with a one-thread executor every layer solve and
   * every stage DP runs one at a time; with two, two run at once (so the count can fail).
   */
  @Test
  void theExecutorsThreadsBoundEveryTask() {
    TrainingJob j = job("opt-125m", 512, "2x2:a100-40gb:ib-hdr200", 32);
    for (int threads : new int[] {1, 2}) {
      Counting counting = new Counting(new LocalExecutor(threads));
      PlanResult r = Planner.plan(j, Pricing.catalog(), PlannerOptions.defaults()
          .withThreads(threads).withExecutor(counting));
      planned(r);
      int solves = ((PlanResult.Planned) r).stats().layerSolves();
      assertThat(solves).isGreaterThan(2);
      assertThat(counting.layerTasks.get()).as("every layer priced through the executor")
          .isGreaterThanOrEqualTo(solves);
      assertThat(counting.peak.get()).isEqualTo(threads);
    }
  }

  /** The planner's choice: the shorter iteration (more than 1e-12 s apart), then fewer stages. */
  @Test
  void choiceFollowsThePlannersRule() {
    assertThat(InterOpPlanner.isBetter(2.0 + 1e-13, 2, 2.0, 3)).isTrue();
    assertThat(InterOpPlanner.isBetter(2.0 + 1e-13, 3, 2.0, 2)).isFalse();
    assertThat(InterOpPlanner.isBetter(1.5, 4, 2.0, 3)).isTrue();
    assertThat(InterOpPlanner.isBetter(2.0, 3, 2.0, 3)).isFalse();
    assertThat(InterOpPlanner.isBetter(2.0 + 2e-12, 1, 2.0, 3)).isFalse();
  }

  /** Runs tasks on a local executor and records how many ran at once. */
  private static final class Counting implements TaskExecutor {
    private final LocalExecutor inner;
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger peak = new AtomicInteger();
    final AtomicInteger layerTasks = new AtomicInteger();

    Counting(LocalExecutor inner) {
      this.inner = inner;
    }

    @Override
    public <T extends Serializable, R extends Serializable> List<R> map(String job,
        List<T> tasks, TaskFunction<T, R> f, IntConsumer done) {
      return inner.map(job, tasks, t -> {
        int now = running.incrementAndGet();
        peak.accumulateAndGet(now, Math::max);
        if (job.equals("price-layers")) {
          layerTasks.incrementAndGet();
        }
        try {
          // Long enough that tasks on two threads overlap.
          Thread.sleep(2);
          return f.apply(t);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        } finally {
          running.decrementAndGet();
        }
      }, done);
    }

    @Override
    public boolean inProcess() {
      return true;
    }

    @Override
    public String description() {
      return "counting " + inner.description();
    }

    @Override
    public void close() {
    }
  }
}

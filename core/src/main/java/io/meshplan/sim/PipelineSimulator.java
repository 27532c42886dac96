package io.meshplan.sim;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Discrete-event simulation of one training iteration of a pipeline (Narayanan et al., SC'21,
 * section 2.2; Huang et al., GPipe). Each device group is an in-order, non-preemptive device with a
 * queue of ops in {@link Schedule} order. An op starts when the group is free and its input has
 * arrived:
 *
 * <ul>
 *   <li>the forward of virtual stage k needs the forward of k-1 for the same microbatch plus the
 *       transfer of {@code stages[k-1].sendBytes} (none for k = 0);
 *   <li>the backward of k needs the backward of k+1 plus the transfer of the gradient, also {@code
 *       stages[k].sendBytes}; the backward of the last virtual stage needs its own forward.
 * </ul>
 *
 * A transfer between two groups takes {@link P2pCost} seconds and runs on its own link, concurrent
 * with compute and with other transfers (no contention); between chunks of one group it is free.
 * Ops are processed in causal order: a group's next op is placed as soon as its input's end time is
 * known, so every start time is {@code max(group free, input arrival)}, exactly what an event queue
 * would give.
 *
 * <p>After the passes, each group runs on a communication stream, one collective at a time:
 *
 * <ul>
 *   <li><b>Gradient sync</b> per chunk ({@link EventKind#GRAD_SYNC}). Without overlap it starts
 *       when the group's last backward ends. With overlap ({@link
 *       StageCost#gradSyncOverlappable()}) the reduction runs in buckets alongside the chunk's last
 *       backward: it may start when that backward starts and runs under the rest of it as
 *       {@link Overlap#under} says, ending no earlier than that backward and later by the compute
 *       it slows; the last bucket ({@link StageCost#gradSyncTailSeconds()}), whose gradients are
 *       ready only when the backward ends, is reduced after that. Chunks are served in the order their sync may start (chunk index among
 *       equals).
 *   <li><b>Optimizer</b> per chunk ({@link EventKind#OPTIMIZER}), one after another, starting when
 *       the group's passes and gradient syncs have ended.
 *   <li><b>Parameter gather</b> per chunk ({@link EventKind#PARAM_GATHER}): with a distributed
 *       optimizer each GPU updates its shard and then all-gathers the updated parameters, so the
 *       gather follows the optimizer step.
 * </ul>
 *
 * Groups do not wait for each other at the end. The iteration time is when the last event of any
 * group ends. Per group, the time splits into compute, exposed communication, bubble and optimizer
 * (see {@link TimeBreakdown}): an idle wait before an op is exposed pipeline communication for the
 * part when its input was in flight on the link, and bubble for the rest; the time after a group's
 * last event until the iteration ends is bubble too.
 *
 * <p>Memory: a microbatch holds its chunk's activations from the start of its forward to the end of
 * its backward (at equal times, frees come first). The peak over time of the sum over (chunk,
 * microbatch) pairs in flight is the activation peak; the peak per GPU is the sum over the group's
 * chunks of weights, gradients and optimizer state, plus the largest temporaries of any chunk
 * (only one op runs at a time), plus the activation peak.
 *
 * <p>Communication volume: the bytes each group's GPUs send per iteration, by axis, are counted
 * from the stages' {@link StageCost#commBytes()} and {@link StageCost#sendBytes()} (see {@link
 * CommVolume#perGpuOfEachGroup}); they do not depend on the timing.
 *
 * <p>A stage whose forward plus backward is shorter than its hardware FLOPs at the dense peak of
 * its {@code tensorParallel} GPUs is rejected, so no simulation predicts more than the dense peak.
 *
 * <p>Cost: O(groups * chunks * microbatches * log) time and memory.
 */
public final class PipelineSimulator {
  private static final double PEAK_SLACK = 1e-9;

  private final SimulationInput input;

  /**
   * Creates the simulator.
   *
   * @param input the pipeline
   * @throws InputException if the schedule cannot run with this depth and number of microbatches
   *     (a user's choice)
   * @throws IllegalArgumentException if a stage claims more FLOP/s than the dense peak (a bug in
   *     the cost model that produced it)
   */
  public PipelineSimulator(SimulationInput input) {
    this.input = Require.nonNull(input, "input");
    Optional<ScheduleError> error = input.schedule().check(input.groups(), input.microbatches());
    if (error.isPresent()) {
      throw new InputException(error.get().message());
    }
    List<StageCost> stages = input.stages();
    for (int k = 0; k < stages.size(); k++) {
      StageCost s = stages.get(k);
      double capacity = s.computeSeconds() * s.tensorParallel() * input.ceilingFlopsPerGpu();
      int at = k;
      Require.that(s.hardwareFlopsPerMicrobatch() <= capacity * (1 + PEAK_SLACK),
          () -> "virtual stage " + at + " does " + s.hardwareFlopsPerMicrobatch() + " FLOPs in "
              + s.computeSeconds() + " s on " + s.tensorParallel()
              + " GPUs, faster than their dense peak of " + input.ceilingFlopsPerGpu()
              + " FLOP/s");
    }
  }

  /**
   * Checks a schedule without building a simulator.
   *
   * @param schedule the schedule
   * @param groups pipeline depth
   * @param microbatches microbatches per iteration
   * @return the problem, if any
   */
  public static Optional<ScheduleError> check(Schedule schedule, int groups, int microbatches) {
    return schedule.check(groups, microbatches);
  }

  /**
   * Runs the simulation.
   *
   * @return the iteration time, its breakdown, throughput, memory and the timeline
   */
  public SimulationResult simulate() {
    Run run = new Run(input);
    run.passes();
    run.collectives();
    return run.result();
  }

  /** The mutable state of one simulation. */
  private static final class Run {
    private final SimulationInput in;
    private final List<StageCost> stages;
    private final int groups;
    private final int chunks;
    private final int micro;
    private final int virtualStages;
    private final List<List<PipelineOp>> orders = new ArrayList<>();
    private final double[] fwdStart;
    private final double[] fwdEnd;
    private final double[] bwdStart;
    private final double[] bwdEnd;
    private final double[] free;
    private final double[] busy;
    private final double[] idle;
    private final double[] p2pWait;
    private final double[] groupEnd;
    private final double[] commFree;
    private final List<Event> events = new ArrayList<>();

    Run(SimulationInput in) {
      this.in = in;
      this.stages = in.stages();
      this.groups = in.groups();
      this.chunks = in.schedule().chunks();
      this.micro = in.microbatches();
      this.virtualStages = stages.size();
      int n = Math.multiplyExact(virtualStages, micro);
      fwdStart = nan(n);
      fwdEnd = nan(n);
      bwdStart = nan(n);
      bwdEnd = nan(n);
      free = new double[groups];
      busy = new double[groups];
      idle = new double[groups];
      p2pWait = new double[groups];
      groupEnd = new double[groups];
      commFree = new double[groups];
      for (int g = 0; g < groups; g++) {
        orders.add(in.schedule().order(g, groups, micro));
      }
    }

    private static double[] nan(int n) {
      double[] a = new double[n];
      Arrays.fill(a, Double.NaN);
      return a;
    }

    private int index(int stage, int microbatch) {
      return stage * micro + microbatch;
    }

    private double transfer(int fromStage, int toStage, double bytes) {
      int from = fromStage % groups;
      int to = toStage % groups;
      if (from == to) {
        return 0.0;
      }
      double s = in.p2p().seconds(from, to, bytes);
      Require.nonNegative(s, "p2p seconds from group " + from + " to group " + to);
      return s;
    }

    /** Places every forward and backward op, in causal order. */
    void passes() {
      int[] next = new int[groups];
      int remaining = Math.multiplyExact(2, Math.multiplyExact(virtualStages, micro));
      while (remaining > 0) {
        boolean progress = false;
        for (int g = 0; g < groups; g++) {
          List<PipelineOp> order = orders.get(g);
          while (next[g] < order.size() && place(g, order.get(next[g]))) {
            next[g]++;
            remaining--;
            progress = true;
          }
        }
        if (!progress) {
          throw new IllegalStateException("schedule " + in.schedule().name()
              + " deadlocks: no group can run its next op");
        }
      }
    }

    /** Places one op if its input is known; returns false if it must wait. */
    private boolean place(int g, PipelineOp op) {
      int k = op.chunk() * groups + g;
      int mb = op.microbatch();
      StageCost cost = stages.get(k);
      double inputEnd;
      double link;
      if (op.forward()) {
        if (k == 0) {
          inputEnd = 0.0;
          link = 0.0;
        } else {
          inputEnd = fwdEnd[index(k - 1, mb)];
          if (Double.isNaN(inputEnd)) {
            return false;
          }
          link = transfer(k - 1, k, stages.get(k - 1).sendBytes());
        }
      } else if (k == virtualStages - 1) {
        inputEnd = fwdEnd[index(k, mb)];
        link = 0.0;
        if (Double.isNaN(inputEnd)) {
          throw new IllegalStateException("backward before forward of microbatch " + mb);
        }
      } else {
        inputEnd = bwdEnd[index(k + 1, mb)];
        if (Double.isNaN(inputEnd)) {
          return false;
        }
        link = transfer(k + 1, k, cost.sendBytes());
      }
      double arrival = inputEnd + link;
      double start = Math.max(free[g], arrival);
      double duration = op.forward() ? cost.forwardSeconds() : cost.backwardSeconds();
      double end = start + duration;
      double wait = start - free[g];
      idle[g] += wait;
      // The part of the wait when the input was on the link is exposed pipeline communication.
      p2pWait[g] += Math.max(0.0, Math.min(wait, arrival - Math.max(free[g], inputEnd)));
      busy[g] += duration;
      free[g] = end;
      int i = index(k, mb);
      if (op.forward()) {
        fwdStart[i] = start;
        fwdEnd[i] = end;
        events.add(new Event(g, k, mb, EventKind.FORWARD, start, end));
        if (k + 1 < virtualStages) {
          send(k, k + 1, mb, end, cost.sendBytes());
        }
      } else {
        bwdStart[i] = start;
        bwdEnd[i] = end;
        events.add(new Event(g, k, mb, EventKind.BACKWARD, start, end));
        if (k > 0) {
          send(k, k - 1, mb, end, stages.get(k - 1).sendBytes());
        }
      }
      return true;
    }

    private void send(int from, int to, int mb, double start, double bytes) {
      double seconds = transfer(from, to, bytes);
      if (seconds > 0) {
        events.add(new Event(from % groups, from, mb, EventKind.SEND, start, start + seconds));
      }
    }

    /** Gradient sync, optimizer and parameter gather on each group's communication stream. */
    void collectives() {
      for (int g = 0; g < groups; g++) {
        double computeEnd = free[g];
        Integer[] order = new Integer[chunks];
        double[] ready = new double[chunks];
        double[] lastEnd = new double[chunks];
        for (int c = 0; c < chunks; c++) {
          order[c] = c;
          int k = c * groups + g;
          double lastStart = 0;
          for (int mb = 0; mb < micro; mb++) {
            int i = index(k, mb);
            if (bwdEnd[i] >= lastEnd[c]) {
              lastEnd[c] = bwdEnd[i];
              lastStart = bwdStart[i];
            }
          }
          ready[c] = stages.get(k).gradSyncOverlappable() ? lastStart : computeEnd;
        }
        Arrays.sort(order, (a, b) -> a.equals(b) ? 0
            : ready[a] != ready[b] ? Double.compare(ready[a], ready[b]) : Integer.compare(a, b));
        double comm = 0.0;
        for (int c : order) {
          int k = c * groups + g;
          StageCost s = stages.get(k);
          if (s.gradSyncSeconds() > 0) {
            double start = Math.max(comm, ready[c]);
            // Overlapped, the buckets reduce under the last backward as their gradients come, but
            // the last bucket's are ready only when that backward ends: its reduction follows.
            double tail = s.gradSyncTailSeconds();
            double end = s.gradSyncOverlappable()
                ? Math.max(start + Overlap.under(Math.max(0.0, lastEnd[c] - start),
                    s.gradSyncSeconds() - tail).seconds(), lastEnd[c]) + tail
                : start + s.gradSyncSeconds();
            events.add(new Event(g, k, -1, EventKind.GRAD_SYNC, start, end));
            comm = end;
          }
        }
        double t = Math.max(comm, computeEnd);
        for (int c = 0; c < chunks; c++) {
          int k = c * groups + g;
          double d = stages.get(k).optimizerSeconds();
          if (d > 0) {
            events.add(new Event(g, k, -1, EventKind.OPTIMIZER, t, t + d));
            t += d;
          }
        }
        for (int c = 0; c < chunks; c++) {
          int k = c * groups + g;
          double d = stages.get(k).paramGatherSeconds();
          if (d > 0) {
            events.add(new Event(g, k, -1, EventKind.PARAM_GATHER, t, t + d));
            t += d;
          }
        }
        commFree[g] = comm;
        groupEnd[g] = t;
      }
    }

    SimulationResult result() {
      double iteration = 0;
      int critical = 0;
      for (int g = 0; g < groups; g++) {
        if (groupEnd[g] > iteration) {
          iteration = groupEnd[g];
          critical = g;
        }
      }
      Require.that(iteration > 0, "the iteration takes no time: every stage has zero cost");
      events.sort(Event.ORDER);
      List<GroupTiming> timings = new ArrayList<>(groups);
      List<StageResult> results = new ArrayList<>(groups);
      double modelFlops = 0;
      double hardwareFlops = 0;
      for (int k = 0; k < virtualStages; k++) {
        StageCost s = stages.get(k);
        double replicas = (double) micro * s.dataParallel();
        modelFlops += s.modelFlopsPerMicrobatch() * replicas;
        hardwareFlops += s.hardwareFlopsPerMicrobatch() * replicas;
      }
      int worst = 0;
      double worstBytes = -1;
      List<CommVolume> volumes = CommVolume.perGpuOfEachGroup(in);
      CommVolume total = CommVolume.NONE;
      for (int g = 0; g < groups; g++) {
        GroupTiming timing = timing(g, iteration);
        timings.add(timing);
        MemoryUse memory = memory(g, timing.peakActivationBytes());
        List<Integer> ks = new ArrayList<>();
        for (int c = 0; c < chunks; c++) {
          ks.add(c * groups + g);
        }
        StageCost s = stages.get(g);
        results.add(new StageResult(g, ks, s.devices(), s.dataParallel(), s.tensorParallel(),
            timing, memory, volumes.get(g)));
        total = total.plus(volumes.get(g).times(s.devices()));
        if (memory.totalBytes() > worstBytes) {
          worstBytes = memory.totalBytes();
          worst = g;
        }
      }
      Timeline timeline = new Timeline(events, timings, iteration);
      double gpus = in.totalGpus();
      MemoryUse worstMemory = results.get(worst).memory();
      return new SimulationResult(in.schedule().name(), micro, iteration,
          critical, timings.get(critical).breakdown(), in.tokensPerIteration() / iteration,
          modelFlops, modelFlops / iteration / gpus / 1e12, hardwareFlops / iteration / gpus / 1e12,
          modelFlops / (iteration * gpus * in.peakFlopsPerGpu()), worstMemory.totalBytes(), worst,
          worstMemory, results, timeline, total);
    }

    private GroupTiming timing(int g, double iteration) {
      double tensor = 0;
      double exchange = 0;
      double shard = 0;
      double recompute = 0;
      double optimizer = 0;
      double hidden = 0;
      double slowdown = 0;
      for (int c = 0; c < chunks; c++) {
        StageCost s = stages.get(c * groups + g);
        tensor += s.tensorCommSeconds() * micro;
        exchange += s.exchangeSeconds() * micro;
        shard += s.shardSeconds() * micro;
        recompute += s.recomputeSeconds() * micro;
        optimizer += s.optimizerSeconds();
        hidden += s.hidden().perMicrobatchSeconds() * micro + s.hidden().perIterationSeconds();
        slowdown += s.hidden().slowdownPerMicrobatchSeconds() * micro;
      }
      double computeEnd = free[g];
      tensor = Math.min(tensor, busy[g]);
      exchange = Math.min(exchange, tensor);
      // ZeRO-2/3's per-microbatch gathers and reduce-scatters run inside the passes, but on the
      // data-parallel axis: they count there, not as tensor-parallel communication.
      shard = Math.min(shard, tensor - exchange);
      double tail = Math.max(0.0, groupEnd[g] - computeEnd - optimizer);
      double pipeline = Math.min(p2pWait[g], idle[g]);
      double bubble = Math.max(0.0, idle[g] - pipeline) + (iteration - groupEnd[g]);
      double compute = busy[g] - tensor;
      TimeBreakdown breakdown = new TimeBreakdown(compute, tensor + pipeline + tail,
          bubble, optimizer, Math.min(recompute, compute), tensor - exchange - shard, pipeline,
          tail + shard, hidden, Math.min(slowdown, compute), exchange);
      int[] inflight = new int[1];
      double peakBytes = activationPeak(g, inflight);
      return new GroupTiming(g, busy[g], computeEnd, groupEnd[g], breakdown, inflight[0],
          peakBytes);
    }

    /** Sweeps the group's forward starts and backward ends; frees first at equal times. */
    private double activationPeak(int g, int[] peakCount) {
      int n = chunks * micro;
      double[] times = new double[2 * n];
      double[] deltas = new double[2 * n];
      Integer[] idx = new Integer[2 * n];
      int j = 0;
      for (int c = 0; c < chunks; c++) {
        int k = c * groups + g;
        double act = stages.get(k).memory().activationBytesPerMicrobatch();
        for (int mb = 0; mb < micro; mb++) {
          int i = index(k, mb);
          times[j] = fwdStart[i];
          deltas[j] = act;
          idx[j] = j;
          j++;
          times[j] = bwdEnd[i];
          deltas[j] = -act;
          idx[j] = j;
          j++;
        }
      }
      // Frees (odd slots) before allocations at the same time; then slot order for determinism.
      Arrays.sort(idx, (a, b) -> {
        int byTime = Double.compare(times[a], times[b]);
        if (byTime != 0) {
          return byTime;
        }
        int byKind = Integer.compare(b % 2, a % 2);
        return byKind != 0 ? byKind : Integer.compare(a, b);
      });
      double bytes = 0;
      double peak = 0;
      int count = 0;
      int maxCount = 0;
      for (int i : idx) {
        boolean alloc = i % 2 == 0;
        bytes += deltas[i];
        count += alloc ? 1 : -1;
        peak = Math.max(peak, bytes);
        maxCount = Math.max(maxCount, count);
      }
      peakCount[0] = maxCount;
      return peak;
    }

    private MemoryUse memory(int g, double activations) {
      double weights = 0;
      double gradients = 0;
      double optimizer = 0;
      double temporaries = 0;
      for (int c = 0; c < chunks; c++) {
        MemoryBreakdown m = stages.get(c * groups + g).memory();
        weights += m.weightsBytes();
        gradients += m.gradientsBytes();
        optimizer += m.optimizerStateBytes();
        temporaries = Math.max(temporaries, m.temporaryBytes());
      }
      return new MemoryUse(weights, gradients, optimizer, activations, temporaries);
    }
  }
}

package io.meshplan.sweep;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.OptionalDouble;

/**
 * Sweep results as JSON Lines: one object per point in grid order, fields in a fixed order, the
 * same decimals as {@link SweepCsv}; figures that do not apply are {@code null}.
 */
public final class SweepJsonl {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private SweepJsonl() {}

  /**
   * Writes the lines.
   *
   * @param results the results in grid order
   * @param usdPerGpuHour the GPU-hour price, or empty for a null cost
   * @return the text, one line per point, each ending in LF
   */
  public static String write(List<PointResult> results, OptionalDouble usdPerGpuHour) {
    return write(results, usdPerGpuHour, java.util.Map.of());
  }

  /**
   * Writes the lines with each planned point's run of {@code --train-tokens} ({@code
   * trainIterations}, {@code trainDays}, {@code ettr}, {@code usdToTrain}).
   *
   * @param results the results in grid order
   * @param usdPerGpuHour the GPU-hour price, or empty for null costs
   * @param runs the runs by point index
   * @return the text, one line per point, each ending in LF
   */
  public static String write(List<PointResult> results, OptionalDouble usdPerGpuHour,
      java.util.Map<Integer, TrainingOutcome> runs) {
    StringBuilder sb = new StringBuilder();
    for (PointResult r : results) {
      SweepPoint p = r.point();
      ObjectNode o = MAPPER.createObjectNode();
      o.put("index", p.index());
      o.put("model", p.model());
      o.put("seq", p.seq());
      o.put("gpu", p.gpu());
      o.put("fabric", p.fabric());
      o.put("nodes", p.nodes());
      o.put("gpusPerNode", p.gpusPerNode());
      o.put("gpus", p.gpus());
      o.put("globalBatch", p.globalBatch());
      if (p.microbatches() == 0) {
        o.put("microbatches", "auto");
      } else {
        o.put("microbatches", p.microbatches());
      }
      o.put("overlapGradReduce", p.overlapGradReduce());
      o.put("attention", p.attention());
      o.put("overlapParamGather", p.overlaps().paramGather());
      o.put("tpCommOverlap", p.overlaps().tensorComm());
      o.put("fsdpPrefetch", p.overlaps().fsdpPrefetch());
      o.put("gradientAccumulationFusion", p.overlaps().gradAccumFusion());
      o.put("fusedCrossEntropy", p.overlaps().lossFusion());
      o.put("gradReduceInBf16", p.overlaps().bf16GradReduce());
      o.put("moeDispatcher", p.overlaps().dispatcher().word());
      o.put("dtype", p.dtype());
      o.put("status", r.status().label());
      o.set("iterationSeconds", number(r.iterationSeconds(), 6));
      o.set("tokensPerSecond", number(r.tokensPerSecond(), 1));
      o.set("tflopsPerGpu", number(r.tflopsPerGpu(), 2));
      o.set("mfu", number(r.mfu(), 4));
      o.set("peakMemoryBytesPerGpu", number(r.peakMemoryBytesPerGpu(), 0));
      o.set("neededMemoryBytesPerGpu", number(r.neededBytesPerGpu(), 0));
      o.set("iterationLowerBoundSeconds", number(r.lowerBoundSeconds(), 6));
      o.set("usdPerMillionTokens", number(SweepCsv.cost(r, usdPerGpuHour), 6));
      o.put("layout", r.layout());
      o.put("message", r.message());
      TrainingOutcome run = runs.get(p.index());
      if (run != null) {
        o.put("trainIterations", run.iterations());
        o.set("trainDays", number(run.days(), 4));
        o.set("ettr", number(run.ettr(), 4));
        o.set("usdToTrain", number(usdPerGpuHour.isPresent()
            ? run.usd(p.gpus(), usdPerGpuHour.getAsDouble()) : Double.NaN, 2));
      }
      try {
        sb.append(MAPPER.writeValueAsString(o)).append('\n');
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
    return sb.toString();
  }

  private static com.fasterxml.jackson.databind.JsonNode number(double v, int decimals) {
    if (Double.isNaN(v)) {
      return MAPPER.nullNode();
    }
    BigDecimal d = new BigDecimal(v).setScale(decimals, RoundingMode.HALF_UP);
    return decimals == 0 ? MAPPER.getNodeFactory().numberNode(d.longValueExact())
        : MAPPER.getNodeFactory().numberNode(d);
  }
}

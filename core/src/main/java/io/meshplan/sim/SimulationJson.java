package io.meshplan.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Writes a {@link SimulationResult} as JSON with a fixed field order, so the same result gives the
 * same bytes: {@code schedule}, {@code microbatches}, {@code iterationSeconds}, {@code
 * tokensPerSecond}, {@code tflopsPerGpu}, {@code hardwareTflopsPerGpu}, {@code mfu}, {@code
 * peakMemoryBytesPerGpu}, {@code criticalStage}, {@code breakdown} (seconds: {@code compute},
 * {@code exposedCommunication}, {@code bubble}, {@code optimizer}, {@code recompute}, {@code
 * tensorParallel}, {@code pipeline}, {@code dataParallel}, and beside them {@code
 * hiddenCommunication} and {@code overlapSlowdown}; see {@link Overlap}), {@code memoryStage}, {@code memory}
 * (bytes per GPU: {@code weights}, {@code gradients}, {@code optimizerState}, {@code activations},
 * {@code temporaries}), {@code communicationBytes} (bytes all GPUs send per iteration: {@code
 * tensorParallel}, {@code dataParallel}, {@code pipeline}; see {@link CommVolume}), {@code
 * communicationBytesPerGpu} (the same over the GPUs the stages use), {@code stages[]} (each with
 * its {@code communicationBytesPerGpu}) and, when asked, {@code events[]} ({@code group}, {@code
 * virtualStage}, {@code microbatch}, {@code kind}, {@code start}, {@code end} in seconds), and,
 * from {@link #write(SimulationResult, boolean, MemoryFit)}, last the {@code fits} object.
 */
public final class SimulationJson {
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private SimulationJson() {}

  /**
   * Renders the result as a JSON tree, for callers that embed it in a larger document.
   *
   * @param result the result
   * @param withEvents whether to include every timeline event
   * @return the tree
   */
  public static ObjectNode tree(SimulationResult result, boolean withEvents) {
    ObjectNode top = MAPPER.createObjectNode();
    top.put("schedule", result.schedule());
    top.put("microbatches", result.microbatches());
    top.put("iterationSeconds", result.iterationSeconds());
    top.put("tokensPerSecond", result.tokensPerSecond());
    top.put("tflopsPerGpu", result.tflopsPerGpu());
    top.put("hardwareTflopsPerGpu", result.hardwareTflopsPerGpu());
    top.put("mfu", result.mfu());
    top.put("peakMemoryBytesPerGpu", bytes(result.peakMemoryBytesPerGpu()));
    top.put("criticalStage", result.criticalGroup());
    top.set("breakdown", breakdown(result.breakdown()));
    top.put("memoryStage", result.memoryGroup());
    top.set("memory", memory(result.memory()));
    top.set("communicationBytes", comm(result.commBytes()));
    top.set("communicationBytesPerGpu", comm(result.commBytesPerGpu()));
    ArrayNode stages = top.putArray("stages");
    for (StageResult s : result.stages()) {
      ObjectNode n = stages.addObject();
      n.put("stage", s.group());
      ArrayNode vs = n.putArray("virtualStages");
      s.virtualStages().forEach(vs::add);
      n.put("devices", s.devices());
      n.put("dataParallel", s.dataParallel());
      n.put("tensorParallel", s.tensorParallel());
      n.put("busyComputeSeconds", s.timing().busyComputeSeconds());
      n.put("computeEndSeconds", s.timing().computeEndSeconds());
      n.put("endSeconds", s.timing().endSeconds());
      n.put("peakInFlightMicrobatches", s.timing().peakInFlightMicrobatches());
      n.set("breakdown", breakdown(s.timing().breakdown()));
      n.put("peakMemoryBytes", bytes(s.memory().totalBytes()));
      n.set("memory", memory(s.memory()));
      n.set("communicationBytesPerGpu", comm(s.commBytesPerGpu()));
    }
    if (withEvents) {
      ArrayNode events = top.putArray("events");
      for (Event e : result.timeline().events()) {
        ObjectNode n = events.addObject();
        n.put("group", e.group());
        n.put("virtualStage", e.virtualStage());
        n.put("microbatch", e.microbatch());
        n.put("kind", e.kind().name());
        n.put("start", e.startSeconds());
        n.put("end", e.endSeconds());
      }
    }
    return top;
  }

  /**
   * Renders the result.
   *
   * @param result the result
   * @param withEvents whether to include every timeline event
   * @return pretty-printed JSON, without a trailing newline
   */
  public static String write(SimulationResult result, boolean withEvents) {
    return text(tree(result, withEvents));
  }

  /**
   * Renders the result followed by a {@code fits} object: {@code fits} (boolean), {@code
   * needBytes} (the worst stage's peak per GPU), {@code capacityBytes} (the memory a GPU may use)
   * and {@code stage} (the worst stage).
   *
   * @param result the result
   * @param withEvents whether to include every timeline event
   * @param fit the peak against the memory a GPU may use
   * @return pretty-printed JSON, without a trailing newline
   */
  public static String write(SimulationResult result, boolean withEvents, MemoryFit fit) {
    return write(result, withEvents, fit, java.util.Optional.empty());
  }

  /**
   * Renders the result and its {@code fits} object ({@link #write(SimulationResult, boolean,
   * MemoryFit)}), with {@code attentionKernel}, the fused attention kernel the run was priced
   * as, when one was named.
   *
   * @param result the result
   * @param withEvents whether to include every timeline event
   * @param fit the peak against the memory a GPU may use
   * @param attentionKernel the named kernel's word, e.g. {@code flash2}, or empty for none
   * @return pretty-printed JSON, without a trailing newline
   */
  public static String write(SimulationResult result, boolean withEvents, MemoryFit fit,
      java.util.Optional<String> attentionKernel) {
    ObjectNode top = tree(result, withEvents);
    attentionKernel.ifPresent(k -> top.put("attentionKernel", k));
    ObjectNode n = top.putObject("fits");
    n.put("fits", fit.fits());
    n.put("needBytes", bytes(fit.needBytes()));
    n.put("capacityBytes", bytes(fit.capacityBytes()));
    n.put("stage", fit.stage());
    return text(top);
  }

  private static String text(ObjectNode top) {
    try {
      return MAPPER.writeValueAsString(top);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a JSON tree", e);
    }
  }

  /**
   * Bytes as a whole number in the JSON: past 2^63 - 1 still the figure (as the text prints it),
   * not a long rounded to its largest value.
   */
  private static java.math.BigInteger bytes(double b) {
    return new java.math.BigDecimal(b).setScale(0, java.math.RoundingMode.HALF_UP)
        .toBigInteger();
  }

  private static ObjectNode breakdown(TimeBreakdown b) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("compute", b.computeSeconds());
    n.put("exposedCommunication", b.exposedCommunicationSeconds());
    n.put("bubble", b.bubbleSeconds());
    n.put("optimizer", b.optimizerSeconds());
    n.put("recompute", b.recomputeSeconds());
    n.put("tensorParallel", b.tensorParallelSeconds());
    n.put("pipeline", b.pipelineSeconds());
    n.put("dataParallel", b.dataParallelSeconds());
    n.put("hiddenCommunication", b.hiddenCommunicationSeconds());
    n.put("overlapSlowdown", b.overlapSlowdownSeconds());
    n.put("expertAndContextExchange", b.exchangeSeconds());
    return n;
  }

  private static ObjectNode comm(CommVolume v) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("tensorParallel", v.tensorParallelBytes());
    n.put("dataParallel", v.dataParallelBytes());
    n.put("pipeline", v.pipelineBytes());
    n.put("expertParallel", v.expertParallelBytes());
    n.put("contextParallel", v.contextParallelBytes());
    return n;
  }

  private static ObjectNode memory(MemoryUse m) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("weights", bytes(m.weightsBytes()));
    n.put("gradients", bytes(m.gradientsBytes()));
    n.put("optimizerState", bytes(m.optimizerStateBytes()));
    n.put("activations", bytes(m.activationsBytes()));
    n.put("temporaries", bytes(m.temporariesBytes()));
    return n;
  }
}

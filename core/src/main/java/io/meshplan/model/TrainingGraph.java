package io.meshplan.model;

import io.meshplan.graph.Graph;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A training step (or part of one) as a graph, with what the planners need to know about each
 * instruction. The graph's root is a tuple of the outputs: the loss (or the last block's output),
 * the input gradient when the input is a parameter, and every updated state; each updated state
 * is aliased to the parameter it replaces ({@link Graph#aliases()}).
 *
 * @param spec the model
 * @param options what was built
 * @param graph the graph
 * @param phases the phase of each instruction, by id
 * @param layers the layer of each instruction, by id
 * @param roles the role of each parameter, by id
 * @param weights the tensors of each trained weight, in order of the weight's parameter id
 * @param input the {@link ParamRole#INPUT_ACTIVATION} parameter, or the {@link ParamRole#TOKENS}
 *     parameter when the embedding is built
 * @param output the last block's output, or the scalar loss when the head is built
 * @param outputGradient the {@link ParamRole#OUTPUT_GRADIENT} parameter, or {@code -1} when the
 *     head is built or there is no backward pass
 * @param inputGradient the gradient of the input activation, or {@code -1} when the embedding is
 *     built or there is no backward pass
 * @param fp8Stored the values whose copy kept for the backward pass is held as FP8 E4M3, one
 *     byte per element ({@link ModelSpec#fp8ActivationInput})
 */
public record TrainingGraph(
    ModelSpec spec, TrainingOptions options, Graph graph, List<Phase> phases,
    List<LayerRef> layers, Map<Integer, ParamRole> roles, List<WeightTensors> weights, int input,
    int output, int outputGradient, int inputGradient, java.util.BitSet fp8Stored) {

  /** Validates sizes and copies the collections. */
  public TrainingGraph {
    Require.nonNull(spec, "spec");
    Require.nonNull(options, "options");
    Require.nonNull(graph, "graph");
    phases = List.copyOf(phases);
    layers = List.copyOf(layers);
    roles = Collections.unmodifiableMap(new TreeMap<>(roles));
    weights = List.copyOf(weights);
    fp8Stored = (java.util.BitSet) Require.nonNull(fp8Stored, "fp8Stored").clone();
    Require.that(phases.size() == graph.size() && layers.size() == graph.size(),
        "one phase and one layer per instruction");
  }

  /**
   * The values whose kept copy is held as FP8 E4M3.
   *
   * @return their ids (a copy)
   */
  @Override
  public java.util.BitSet fp8Stored() {
    return (java.util.BitSet) fp8Stored.clone();
  }

  /**
   * The bytes a value takes when kept for the backward pass: its own, or one per element when the
   * framework keeps it as an FP8 copy ({@link #fp8Stored}).
   *
   * @param id the value
   * @return bytes
   */
  public long keptBytes(int id) {
    return fp8Stored.get(id) ? graph.get(id).tensorShape().elementCount()
        : graph.get(id).shape().byteSize();
  }

  /**
   * Whether the framework keeps a value as an FP8 copy ({@link #fp8Stored}).
   *
   * @param id the value
   * @return true when it does
   */
  public boolean keptInFp8(int id) {
    return fp8Stored.get(id);
  }

  /**
   * The phase of an instruction.
   *
   * @param id the id
   * @return its phase
   */
  public Phase phase(int id) {
    return phases.get(id);
  }

  /**
   * The layer of an instruction.
   *
   * @param id the id
   * @return its layer
   */
  public LayerRef layer(int id) {
    return layers.get(id);
  }

  /**
   * The role of a parameter.
   *
   * @param id an instruction id
   * @return its role, or empty when it is not a parameter
   */
  public Optional<ParamRole> role(int id) {
    return Optional.ofNullable(roles.get(id));
  }

  /**
   * The parameters with a role, in id order.
   *
   * @param role the role
   * @return their ids
   */
  public List<Integer> parameters(ParamRole role) {
    List<Integer> out = new ArrayList<>();
    for (Map.Entry<Integer, ParamRole> e : roles.entrySet()) {
      if (e.getValue() == role) {
        out.add(e.getKey());
      }
    }
    return out;
  }

  /**
   * The instructions of one layer and phase, in id order.
   *
   * @param layer the layer
   * @param phase the phase
   * @return their ids
   */
  public List<Integer> instructions(LayerRef layer, Phase phase) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < graph.size(); i++) {
      if (phases.get(i) == phase && layers.get(i).equals(layer)) {
        out.add(i);
      }
    }
    return out;
  }

  /**
   * The device-local instructions: those of the mixture-of-experts part between dispatch and
   * combine (forward, backward and the experts' gradient accumulation and update), whose rows
   * differ from GPU to GPU ({@link MoeForward}). The dispatch and combine themselves are not.
   *
   * @return their ids
   */
  public java.util.BitSet deviceLocal() {
    java.util.BitSet out = new java.util.BitSet();
    if (!spec.arch().moe().routed()) {
      return out;
    }
    for (io.meshplan.graph.Instruction ins : graph.instructions()) {
      if (ins.opcode().kind() == io.meshplan.graph.OpKind.TOKEN_EXCHANGE) {
        continue;
      }
      for (String segment : ins.opName().split("/")) {
        if (segment.equals(MoeForward.LOCAL_PART)) {
          out.set(ins.id());
          break;
        }
      }
    }
    return out;
  }
}

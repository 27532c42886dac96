package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.GraphBuilder;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link GraphBuilder} that also records, for every instruction, its {@link Phase} and {@link
 * LayerRef}, for every parameter its {@link ParamRole}, which forward values are kept for the
 * backward pass, and the custom vector-Jacobian products of fused regions (softmax,
 * cross-entropy). The scope of each instruction is {@code <layer>/<phase>/<part>}.
 */
final class Tape {
  /** A custom vector-Jacobian product of a region whose output it is attached to. */
  @FunctionalInterface
  interface CustomVjp {
    void apply(Backprop bp, int cotangent);
  }

  final GraphBuilder b;
  private final List<Phase> phases = new ArrayList<>();
  private final List<LayerRef> layers = new ArrayList<>();
  private final Map<Integer, ParamRole> roles = new TreeMap<>();
  private final BitSet kept = new BitSet();
  private final Map<Integer, CustomVjp> custom = new HashMap<>();
  private final Map<Integer, Integer> regionStartByLast = new HashMap<>();
  /** The last ids of regions whose replay reuses the values kept inside them. */
  private final BitSet replays = new BitSet();
  private final BitSet rerun = new BitSet();
  /** The values whose kept copy the framework holds in FP8 ({@link #storeFp8}). */
  private final BitSet fp8Stored = new BitSet();
  private Phase phase = Phase.FORWARD;
  private LayerRef layer = LayerRef.embedding();
  private String part = "";

  Tape(String name) {
    this.b = new GraphBuilder(name);
  }

  /** Sets phase, layer and part for the instructions added next. */
  void at(Phase p, LayerRef l, String newPart) {
    phase = p;
    layer = l;
    part = newPart;
    b.scope(l.scope() + "/" + p.scopeWord() + (newPart.isEmpty() ? "" : "/" + newPart));
  }

  /** Sets the part, keeping phase and layer. */
  void part(String newPart) {
    at(phase, layer, newPart);
  }

  Phase phase() {
    return phase;
  }

  LayerRef layer() {
    return layer;
  }

  String part() {
    return part;
  }

  Phase phaseOf(int id) {
    return phases.get(id);
  }

  LayerRef layerOf(int id) {
    return layers.get(id);
  }

  /** The part of an instruction's scope after {@code <layer>/<phase>/}. */
  String partOf(int id) {
    String s = b.instruction(id).opName();
    int first = s.indexOf('/');
    int second = first < 0 ? -1 : s.indexOf('/', first + 1);
    return second < 0 ? "" : s.substring(second + 1);
  }

  List<Phase> phases() {
    return phases;
  }

  List<LayerRef> layers() {
    return layers;
  }

  Map<Integer, ParamRole> roles() {
    return roles;
  }

  int size() {
    return b.size();
  }

  Instruction ins(int id) {
    return b.instruction(id);
  }

  TensorShape shape(int id) {
    return b.shape(id);
  }

  /** Marks a forward value as kept for the backward pass. */
  int keep(int id) {
    kept.set(id);
    return id;
  }

  boolean kept(int id) {
    return kept.get(id);
  }

  /**
   * Marks a forward value as kept whose instruction a replayed region ({@link #replayRegion})
   * nevertheless runs again: the region's policy saves what the value feeds (its bytes, held
   * here as this value's) and recomputes the value itself, which the replay then discards, as
   * torchtitan's per-op checkpointing does with the grouped GEMM whose output feeds a saved
   * all-to-all ({@link Recompute#OP}).
   */
  int keepRerun(int id) {
    rerun.set(id);
    return keep(id);
  }

  /**
   * Marks a value whose copy kept for the backward pass, if it is kept, the framework holds as
   * FP8 E4M3, one byte per element, and casts back when the backward pass reads it.
   */
  void storeFp8(int id) {
    fp8Stored.set(id);
  }

  /** The values {@link #storeFp8} marked (the tape's own set; {@link TrainingGraph} copies it). */
  BitSet fp8Stored() {
    return fp8Stored;
  }

  /** Whether a replay runs a kept value's instruction again ({@link #keepRerun}). */
  boolean rerun(int id) {
    return rerun.get(id);
  }

  /** Attaches a custom vector-Jacobian product to a region's output. */
  void customVjp(int output, CustomVjp vjp) {
    custom.put(output, vjp);
  }

  CustomVjp customVjp(int output) {
    return custom.get(output);
  }

  /**
   * Declares that forward instructions {@code [from, to)} are recomputed together, in order, just
   * before the backward pass reaches the last of them (full recomputation of a block, selective
   * recomputation of the attention core).
   */
  void recomputeRegion(int from, int to) {
    regionStartByLast.put(to - 1, from);
  }

  /**
   * Declares a region like {@link #recomputeRegion} whose replay reuses the values kept inside it
   * instead of computing them again: a checkpoint whose policy saves some operations' outputs
   * ({@link Recompute#OP}).
   */
  void replayRegion(int from, int to) {
    recomputeRegion(from, to);
    replays.set(to - 1);
  }

  /** Whether the region ending at {@code last} reuses its kept values ({@link #replayRegion}). */
  boolean replays(int last) {
    return replays.get(last);
  }

  /** The first id of the recompute region ending at {@code last}, or -1. */
  int regionEndingAt(int last) {
    return regionStartByLast.getOrDefault(last, -1);
  }

  private int tag(int id) {
    if (id != phases.size()) {
      throw new IllegalStateException("instruction " + id + " was not tagged in order");
    }
    phases.add(phase);
    layers.add(layer);
    return id;
  }

  // ------------------------------------------------------------------ instructions

  int param(TensorShape shape, ParamRole role) {
    int id = tag(b.parameter(shape));
    roles.put(id, role);
    return id;
  }

  int constant(DType t, double v) {
    return tag(b.constant(t, v));
  }

  /**
   * A constant broadcast to a shape, made for one use: in the intra-op ILP a broadcast is a layout
   * decision, and one shared by several users would join their decisions into cycles that the
   * solver's graph reductions cannot remove.
   */
  int fill(TensorShape shape, double v) {
    return broadcast(constant(shape.dtype(), v), shape.dims());
  }

  int iota(TensorShape shape, int dim) {
    return tag(b.iota(shape, dim));
  }

  int broadcast(int x, int[] outDims, int... dims) {
    return tag(b.broadcast(x, outDims, dims));
  }

  int reshape(int x, int... dims) {
    return tag(b.reshape(x, dims));
  }

  int transpose(int x, int... perm) {
    return tag(b.transpose(x, perm));
  }

  int unary(Opcode op, int x) {
    return tag(b.unary(op, x));
  }

  int convert(int x, DType t) {
    return tag(b.convert(x, t));
  }

  int binary(Opcode op, int x, int y) {
    return tag(b.binary(op, x, y));
  }

  int add(int x, int y) {
    return binary(Opcode.ADD, x, y);
  }

  int mul(int x, int y) {
    return binary(Opcode.MULTIPLY, x, y);
  }

  int compare(String dir, int x, int y) {
    return tag(b.compare(dir, x, y));
  }

  int select(int p, int t, int f) {
    return tag(b.select(p, t, f));
  }

  int reduce(int x, int... dims) {
    return tag(b.reduce(x, dims));
  }

  int fusedAttention(int q, int k, int v, double work, int span) {
    return tag(b.fusedAttention(q, k, v, work, span));
  }

  int scan(Opcode op, int chunk, int... operands) {
    return tag(b.scan(op, chunk, operands));
  }

  int scanGrad(Opcode op, int output, int chunk, int dY, int... operands) {
    return tag(b.scanGrad(op, output, chunk, dY, operands));
  }

  int fusedAttentionGrad(int output, int q, int k, int v, int o, int dO, double work,
      int span) {
    return tag(b.fusedAttentionGrad(output, q, k, v, o, dO, work, span));
  }


  int dot(int l, int r) {
    return tag(b.dot(l, r));
  }

  int dot(int l, int r, int[] lb, int[] lc, int[] rb, int[] rc) {
    return tag(b.dot(l, r, lb, lc, rb, rc));
  }

  int dot(int l, int r, int[] lb, int[] lc, int[] rb, int[] rc, DType result) {
    return tag(b.dot(l, r, lb, lc, rb, rc, result));
  }

  int slice(int x, int[] starts, int[] limits) {
    return tag(b.slice(x, starts, limits));
  }

  int concatenate(int dim, int... xs) {
    return tag(b.concatenate(dim, xs));
  }

  int gather(int table, int indices) {
    return tag(b.gather(table, indices));
  }

  int moeDispatch(int tokens, int weights, int groups, int rows) {
    return tag(b.moeDispatch(tokens, weights, groups, rows));
  }

  int moeCombine(int rows, int weights, int batch, int seq) {
    return tag(b.moeCombine(rows, weights, batch, seq));
  }

  int scatterAdd(int operand, int indices, int updates) {
    return tag(b.scatterAdd(operand, indices, updates));
  }

  int tuple(int... xs) {
    return tag(b.tuple(xs));
  }

  void alias(int parameter, int output) {
    b.alias(parameter, output);
  }
}

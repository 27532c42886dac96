package io.meshplan.graph;

/**
 * A value and the instruction whose value replaces it in the same buffer: a parameter and its
 * update after the step (a weight and its updated value), or a loop-carried value and its value
 * after one iteration. Both must take the same sharding, since they share one buffer.
 *
 * @param parameter the id of the value replaced (a parameter, or a loop's initial value)
 * @param output the id of the replacing value
 */
public record AliasPair(int parameter, int output) {}

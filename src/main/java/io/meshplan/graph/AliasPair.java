package io.meshplan.graph;

/**
 * A parameter and the instruction whose value replaces it after the step (for example a weight and
 * its updated value). Both must take the same sharding, since they share one buffer.
 *
 * @param parameter the id of the parameter
 * @param output the id of the updated value
 */
public record AliasPair(int parameter, int output) {}

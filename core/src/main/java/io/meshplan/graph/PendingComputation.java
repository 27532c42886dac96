package io.meshplan.graph;

import java.util.List;

/**
 * One computation as {@link HloReader} read it.
 *
 * @param name the computation name
 * @param at where the computation starts in the text
 * @param entryAt where {@code ENTRY} stands, or -1 when it is not the entry computation
 * @param body the instructions in text order
 * @param root the index in {@code body} of the root: the one marked {@code ROOT}, else the last
 * @param trailer the attributes after the closing brace as written (with their leading comma), or
 *     empty
 */
record PendingComputation(String name, int at, int entryAt, List<PendingInstruction> body,
    int root, String trailer) {}

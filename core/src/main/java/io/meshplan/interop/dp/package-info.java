/**
 * Alpa's inter-operator stage DP (OSDI'22, section 5.2) as a pure function of a stage cost table:
 * the table ({@link io.meshplan.interop.dp.StageCostTable}) of options per layer range and submesh,
 * the DP ({@link io.meshplan.interop.dp.StageDp}) and the partition it returns ({@link
 * io.meshplan.interop.dp.StagePartition}), and the two ways the search shapes a table: grouped
 * layers and the Pareto filter of a stage's options. It depends only on the search space.
 */
package io.meshplan.interop.dp;

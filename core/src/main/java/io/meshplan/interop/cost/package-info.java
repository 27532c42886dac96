/**
 * What layers and stages cost: layers priced by the intra-operator ILP ({@link
 * io.meshplan.interop.cost.IlpLayerCostModel}, shared per process by {@link
 * io.meshplan.interop.cost.LayerCostCache}), the phase accounting of a planned layer that preset
 * and HLO layers share ({@link io.meshplan.interop.cost.PhaseAccountant}), a stage's layers with
 * its once-per-iteration data-parallel work ({@link io.meshplan.interop.cost.StageCostBuilder}),
 * and stages put together into a simulated pipeline ({@link
 * io.meshplan.interop.cost.StageAssembler}). It depends only on the search space.
 */
package io.meshplan.interop.cost;

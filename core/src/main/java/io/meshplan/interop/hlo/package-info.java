/**
 * Pipeline plans of an XLA HLO training step: its layers and phases ({@link
 * io.meshplan.interop.hlo.HloLayering}), each layer cut out as a graph of its own and priced on
 * logical meshes ({@link io.meshplan.interop.hlo.HloLayerPricer}), the stage DP over them ({@link
 * io.meshplan.interop.hlo.HloPipelinePlanner}), which builds the common {@link
 * io.meshplan.plan.PipelinePlan} (its source the module) and prices a saved one again. It uses the
 * costs, the stage DP and the search space, never the model-preset search above it.
 */
package io.meshplan.interop.hlo;

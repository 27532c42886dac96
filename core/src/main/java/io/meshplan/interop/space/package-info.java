/**
 * The search space of whole-cluster planning: the request ({@link
 * io.meshplan.interop.space.PlanRequest}), Alpa's submesh shapes and the coarsening that keeps
 * the stage DP small ({@link io.meshplan.interop.space.SubmeshShape}, {@link
 * io.meshplan.interop.space.SearchSpace}), the settings a layer and a stage may take, and the rules
 * that enumerate them ({@link io.meshplan.interop.space.SearchRules}). It depends on nothing else
 * in {@code interop}.
 */
package io.meshplan.interop.space;

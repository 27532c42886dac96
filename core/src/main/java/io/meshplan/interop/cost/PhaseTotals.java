package io.meshplan.interop.cost;

/**
 * What a planned layer costs, summed by {@link PhaseAccountant} over its instructions' buckets.
 * Seconds are in the unit of the plan's prices (seconds on a real cluster); bytes are those one GPU
 * sends, counted as nccl-tests counts bus bytes ({@link io.meshplan.intraop.PlanCommBytes}); FLOPs
 * are those of the whole layer graph, all GPUs of the mesh together.
 *
 * @param forwardSeconds {@link PhaseAccountant.Bucket#FORWARD} compute and communication, seconds
 *     per microbatch
 * @param backwardSeconds compute and communication of {@link PhaseAccountant.Bucket#BACKWARD},
 *     {@link PhaseAccountant.Bucket#RECOMPUTE} and {@link PhaseAccountant.Bucket#ACCUMULATE}, and
 *     the compute of {@link PhaseAccountant.Bucket#GRADIENT}, seconds per microbatch
 * @param recomputeSeconds the {@link PhaseAccountant.Bucket#RECOMPUTE} part of {@code
 *     backwardSeconds}, seconds per microbatch
 * @param commSeconds communication of the per-microbatch buckets (all but GRADIENT and UPDATE),
 *     seconds per microbatch; part of forward plus backward seconds
 * @param forwardCommSeconds the {@link PhaseAccountant.Bucket#FORWARD} part of {@code
 *     commSeconds}, seconds per microbatch
 * @param gradientSyncSeconds {@link PhaseAccountant.Bucket#GRADIENT} communication, seconds per
 *     iteration
 * @param updateSeconds {@link PhaseAccountant.Bucket#UPDATE} compute and communication, seconds
 *     per iteration
 * @param modelFlops dot and convolution FLOPs of FORWARD, BACKWARD and GRADIENT, per microbatch
 * @param hardwareFlops {@code modelFlops} plus the dot and convolution FLOPs of RECOMPUTE, per
 *     microbatch
 * @param axis0Bytes bytes one GPU sends on mesh axis 0 in the per-microbatch buckets, per
 *     microbatch
 * @param axis1Bytes bytes one GPU sends on mesh axis 1 in the per-microbatch buckets, per
 *     microbatch
 * @param forwardAxis0Bytes the FORWARD part of {@code axis0Bytes}, bytes per microbatch
 * @param forwardAxis1Bytes the FORWARD part of {@code axis1Bytes}, bytes per microbatch
 * @param iterationBytes bytes one GPU sends on both axes in GRADIENT and UPDATE, per iteration
 * @param savedBytes bytes per GPU of the values kept from the forward to the backward pass, per
 *     microbatch
 * @param savedInsideBytes the part of {@code savedBytes} computed inside the layer, bytes per GPU
 *     per microbatch
 * @param accumulateSeconds the compute of {@link PhaseAccountant.Bucket#ACCUMULATE}, part of
 *     {@code backwardSeconds}, seconds per microbatch
 */
public record PhaseTotals(double forwardSeconds, double backwardSeconds, double recomputeSeconds,
    double commSeconds, double forwardCommSeconds, double gradientSyncSeconds,
    double updateSeconds, double modelFlops, double hardwareFlops, double axis0Bytes,
    double axis1Bytes, double forwardAxis0Bytes, double forwardAxis1Bytes, double iterationBytes,
    double savedBytes, double savedInsideBytes, double accumulateSeconds) {
}

package io.meshplan.cluster;

/**
 * Prices the computation one device performs. With hand-given alpha and beta (Alpa's abstract
 * units) there is none, and compute costs are zero as in Alpa's prototype.
 */
public interface ComputeModel {
  /**
   * The time to run an op on one device.
   *
   * @param flops floating-point operations on this device
   * @param bytes bytes read and written in device memory
   * @return the cost in the same unit as the communication model (seconds for a real cluster)
   */
  double cost(double flops, double bytes);

  /**
   * The time to run a matrix multiplication on one device. Models that know that small GEMMs run
   * below peak override this; the default prices it like any other op.
   *
   * @param flops floating-point operations on this device
   * @param bytes bytes read and written in device memory
   * @return the cost in the same unit as the communication model
   */
  default double dotCost(double flops, double bytes) {
    return cost(flops, bytes);
  }

  /**
   * The time to run a matrix multiplication whose operands are of a given precision. Only
   * {@link Precision#FP8} operands are priced apart (at the FP8 rate by models that know it);
   * any other precision is priced as {@link #dotCost(double, double)}.
   *
   * @param flops floating-point operations on this device
   * @param bytes bytes read and written in device memory
   * @param operands the operands' precision
   * @return the cost in the same unit as the communication model
   */
  default double dotCost(double flops, double bytes, Precision operands) {
    return dotCost(flops, bytes);
  }

  /**
   * Time of a fused attention kernel (FlashAttention), in the model's unit; by default priced as
   * a matrix product of the same work.
   *
   * @param flops its matrix FLOPs
   * @param bytes bytes it reads and writes
   * @param backward whether it is the backward kernel
   * @return cost
   */
  default double attentionCost(double flops, double bytes, boolean backward) {
    return dotCost(flops, bytes);
  }

  /**
   * Time of a fused attention kernel whose heads have {@code headDim} elements; models that know
   * how the head dimension moves the kernels' speed override this, the default ignores it.
   *
   * @param flops its matrix FLOPs
   * @param bytes bytes it reads and writes
   * @param backward whether it is the backward kernel
   * @param headDim the elements of one head's query
   * @return cost
   */
  default double attentionCost(double flops, double bytes, boolean backward, int headDim) {
    return attentionCost(flops, bytes, backward);
  }

  /**
   * Time of a fused attention kernel whose heads have {@code headDim} elements, over a sequence
   * of {@code sequence} tokens; models that know how the length moves the kernels' speed
   * override this, the default ignores it.
   *
   * @param flops its matrix FLOPs
   * @param bytes bytes it reads and writes
   * @param backward whether it is the backward kernel
   * @param headDim the elements of one head's query
   * @param sequence the tokens of the sequence it attends over
   * @return cost
   */
  default double attentionCost(double flops, double bytes, boolean backward, int headDim,
      int sequence) {
    return attentionCost(flops, bytes, backward, headDim);
  }

  /**
   * Whether this model's FP8 GEMM prices ({@link #dotCost(double, double, Precision)} with FP8
   * operands) already hold the casts of the operands to 8 bits, as Transformer Engine's measured
   * GEMMs with their casts do ({@link Fp8Quantization}): a convert to an 8-bit float then costs no
   * time of its own. By default it does not.
   *
   * @return true where the casts are priced within the GEMMs
   */
  default boolean fp8GemmsHoldTheirCasts() {
    return false;
  }
}

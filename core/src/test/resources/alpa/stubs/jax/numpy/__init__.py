"""Stand-in for jax.numpy: dtype names."""
float16 = "float16"
bfloat16 = "bfloat16"
float32 = "float32"

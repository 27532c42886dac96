import unittest

import _support  # noqa: F401 - puts the kit on the path
import cases
import formulas


class GemmFlops(unittest.TestCase):
    def test_two_flop_per_multiply_accumulate(self):
        # 2 * 8192 * 13312 * 16384 = 3,573,412,790,272 (Llama 3 405B MLP input at TP 8)
        self.assertEqual(formulas.gemm_flops(8192, 13312, 16384), 3_573_412_790_272)

    def test_small_case(self):
        # 2 * 2 * 3 * 4 = 48
        self.assertEqual(formulas.gemm_flops(2, 3, 4), 48)

    def test_refuses_non_positive_sizes(self):
        for bad in (0, -1, 1.5, True):
            with self.assertRaises(ValueError):
                formulas.gemm_flops(bad, 1, 1)


class AttentionFlops(unittest.TestCase):
    # FlashAttention-2's grid at seq 4096, head dim 128: batch 4, 16 heads.
    # forward, not causal: 4 * 4 * 16 * 4096^2 * 128 = 549,755,813,888
    # causal halves it: 274,877,906,944; backward is 2.5x: 687,194,767,360;
    # forward and backward 3.5x: 962,072,674,304.
    def test_forward_not_causal(self):
        self.assertEqual(formulas.attention_flops(4, 16, 4096, 128, causal=False),
                         549_755_813_888)

    def test_forward_causal_is_half(self):
        self.assertEqual(formulas.attention_flops(4, 16, 4096, 128), 274_877_906_944)

    def test_backward_is_two_and_a_half_forwards(self):
        self.assertEqual(formulas.attention_flops(4, 16, 4096, 128, direction="bwd"),
                         687_194_767_360)

    def test_forward_and_backward_is_three_and_a_half(self):
        self.assertEqual(formulas.attention_flops(4, 16, 4096, 128, direction="fwd+bwd"),
                         962_072_674_304)

    def test_tiny_case_by_hand(self):
        # 4 * 1 * 1 * 2^2 * 1 = 16, causal 8, backward 8 * 5 / 2 = 20
        self.assertEqual(formulas.attention_flops(1, 1, 2, 1), 8)
        self.assertEqual(formulas.attention_flops(1, 1, 2, 1, direction="bwd"), 20)

    def test_grid_keeps_sixteen_k_tokens_and_hidden_2048(self):
        for case in cases.attention_cases():
            self.assertEqual(case.batch * case.seq, 16384, case)
            self.assertEqual(case.heads * case.head_dim, 2048, case)

    def test_unknown_direction(self):
        with self.assertRaises(ValueError):
            formulas.attention_flops(1, 1, 2, 1, direction="sideways")


class BlockFlops(unittest.TestCase):
    # Llama 3 8B, batch 2, seq 4096: tokens 8192.
    # QKV 4096 * (32 + 2 * 8) * 128 = 25,165,824; output 32 * 128 * 4096 = 16,777,216;
    # MLP 3 * 4096 * 14336 = 176,160,768; sum 218,103,808 weights;
    # forward matrix products 2 * 8192 * 218,103,808 = 3,573,412,790,272.
    # Attention forward, causal: 4 * 2 * 32 * 4096^2 * 128 / 2 = 274,877,906,944.
    def test_matrix_products(self):
        self.assertEqual(formulas.block_matmul_flops_fwd(8192, 4096, 32, 8, 128, 14336),
                         3_573_412_790_272)

    def test_forward(self):
        # 3,573,412,790,272 + 274,877,906,944 = 3,848,290,697,216
        self.assertEqual(formulas.block_flops(2, 4096, 4096, 32, 8, 128, 14336, "fwd"),
                         3_848_290_697_216)

    def test_forward_and_backward(self):
        # 3 * 3,573,412,790,272 + 3.5 * 274,877,906,944
        # = 10,720,238,370,816 + 962,072,674,304 = 11,682,311,045,120
        self.assertEqual(formulas.block_flops(2, 4096, 4096, 32, 8, 128, 14336, "fwd+bwd"),
                         11_682_311_045_120)

    def test_gelu_mlp_has_two_matrices(self):
        # GPT-3 175B, one token: QKV 12288 * 288 * 128 = 452,984,832; output 96 * 128 * 12288 =
        # 150,994,944; MLP 2 * 12288 * 49152 = 1,207,959,552; 2 * sum = 3,623,878,656
        self.assertEqual(formulas.block_matmul_flops_fwd(1, 12288, 96, 96, 128, 49152, gated=False),
                         3_623_878_656)

    def test_block_case_uses_the_formula(self):
        case = [c for c in cases.block_cases() if c.model.name == "llama3-8b"][0]
        self.assertEqual(case.flops(), 3_848_290_697_216)


class Bytes(unittest.TestCase):
    def test_rms_norm_reads_x_and_weight_writes_y(self):
        # (2 * 8192 * 4096 + 4096) * 2 bytes = (67,108,864 + 4,096) * 2 = 134,225,920
        self.assertEqual(formulas.rms_norm_bytes(8192, 4096), 134_225_920)

    def test_layer_norm_adds_the_bias(self):
        # (2 * 8192 * 4096 + 2 * 4096) * 2 = (67,108,864 + 8,192) * 2 = 134,234,112
        self.assertEqual(formulas.layer_norm_bytes(8192, 4096), 134_234_112)

    def test_elementwise_as_stream_counts(self):
        # 1,000 bf16 values: add and SiLU*mul 3 * 1000 * 2 = 6000, copy 2 * 1000 * 2 = 4000
        self.assertEqual(formulas.elementwise_bytes("add", 1000), 6000)
        self.assertEqual(formulas.elementwise_bytes("silu_mul", 1000), 6000)
        self.assertEqual(formulas.elementwise_bytes("copy", 1000), 4000)
        self.assertEqual(formulas.elementwise_bytes("copy", 1000, "fp32"), 8000)

    def test_unknown_op(self):
        with self.assertRaises(ValueError):
            formulas.elementwise_bytes("fma", 10)


class LayerShapes(unittest.TestCase):
    def test_llama3_70b_at_tp8(self):
        # QKV (64 + 16) * 128 / 8 = 1280 columns; output 64 * 128 / 8 = 1024 rows;
        # MLP input 2 * 28672 / 8 = 7168 columns; MLP output 28672 / 8 = 3584 rows.
        shapes = [(c.layer, c.k, c.n) for c in cases.layer_gemms(cases.LLAMA3_70B, 8, 8192, "bf16")]
        self.assertEqual(shapes, [("qkv", 8192, 1280), ("attn_out", 1024, 8192),
                                  ("mlp_in", 8192, 7168), ("mlp_out", 3584, 8192)])

    def test_gpt3_qkv_is_three_h(self):
        qkv = cases.layer_gemms(cases.GPT3_175B, 1, 2048, "bf16")[0]
        self.assertEqual(qkv.n, 3 * 12288)

    def test_every_sweep_dimension_suits_fp8(self):
        # torch._scaled_mm wants K and N multiples of 16.
        for case in cases.sweep_gemms("fp8") + cases.sustained_gemms():
            self.assertEqual(case.k % 16, 0, case)
            self.assertEqual(case.n % 16, 0, case)


if __name__ == "__main__":
    unittest.main()

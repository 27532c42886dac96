import itertools
import random
import unittest

import _support  # noqa: F401
import plan


def _subsets():
    for size in range(1, len(plan.KINDS) + 1):
        for combo in itertools.combinations(plan.KINDS, size):
            yield combo


class BudgetSplit(unittest.TestCase):
    def assert_fits(self, the_plan, budget_s):
        budget_ms = int(budget_s * 1000)
        self.assertEqual(the_plan.budget_ms, budget_ms)
        for part in the_plan.parts:
            self.assertLessEqual(part.planned_ms, part.ms, part.kind)
            for item in part.items:
                self.assertGreater(item.ms, 0, item)
        self.assertLessEqual(sum(part.ms for part in the_plan.parts) + the_plan.reserve_ms,
                             budget_ms)
        self.assertLessEqual(the_plan.planned_ms + the_plan.reserve_ms, budget_ms)
        # The watchdog's hard stop stays inside 8 minutes (480 s), with room to spare.
        self.assertLessEqual(the_plan.hard_stop_ms, 460_000)

    def test_every_whole_budget_with_every_kind(self):
        for budget in range(plan.MIN_BUDGET_S, plan.MAX_BUDGET_S + 1):
            self.assert_fits(plan.make_plan(budget), budget)

    def test_every_subset_at_the_edges_and_the_default(self):
        for kinds in _subsets():
            for budget in (plan.MIN_BUDGET_S, 420, plan.MAX_BUDGET_S):
                the_plan = plan.make_plan(budget, kinds)
                self.assert_fits(the_plan, budget)
                self.assertEqual(tuple(p.kind for p in the_plan.parts), kinds)

    def test_seeded_random_budgets_and_subsets(self):
        rng = random.Random(38)
        subsets = list(_subsets())
        for _ in range(400):
            budget = round(rng.uniform(plan.MIN_BUDGET_S, plan.MAX_BUDGET_S), 3)
            self.assert_fits(plan.make_plan(budget, rng.choice(subsets)), budget)

    def test_refuses_budgets_outside_the_range(self):
        for budget in (plan.MIN_BUDGET_S - 0.001, plan.MAX_BUDGET_S + 1, 0, -5):
            with self.assertRaises(ValueError):
                plan.make_plan(budget)

    def test_refuses_unknown_or_no_kinds(self):
        with self.assertRaises(ValueError):
            plan.make_plan(420, ("gemm", "fft"))
        with self.assertRaises(ValueError):
            plan.make_plan(420, ())


class DefaultPlan(unittest.TestCase):
    def setUp(self):
        self.plan = plan.make_plan(420)
        self.parts = {p.kind: p for p in self.plan.parts}

    def test_reserve_and_shares(self):
        # reserve: max(10 s, 420 / 10) = 42 s, so 378 s for the parts;
        # gemm 378 * 56 / 100 = 211.68 s, attention 378 * 16 / 100 = 60.48 s,
        # norm and elementwise 18.9 s, launch 11.34 s, block 45.36 s, scan 11.34 s.
        self.assertEqual(self.plan.reserve_ms, 42_000)
        self.assertEqual({k: p.ms for k, p in self.parts.items()},
                         {"gemm": 211_680, "attention": 60_480, "norm": 18_900,
                          "elementwise": 18_900, "launch": 11_340, "block": 45_360,
                          "scan": 11_340})

    def test_sustained_gemms_run_a_minute_each(self):
        sustained = [i for i in self.parts["gemm"].items if i.case.sustained]
        self.assertEqual([(i.case.dtype, i.ms) for i in sustained],
                         [("bf16", 60_000), ("fp8", 60_000)])

    def test_sweep_shapes_fill_the_rest_at_two_to_five_seconds(self):
        # 211,680 - 120,000 = 91,680 ms of sweep; 91,680 // 2,000 = 45 shapes fit,
        # 45 // 3 = 15 of them fp8, 30 bf16, each 91,680 // 45 = 2,037 ms.
        sweep = [i for i in self.parts["gemm"].items if not i.case.sustained]
        self.assertEqual(len(sweep), 45)
        self.assertEqual(sum(1 for i in sweep if i.case.dtype == "fp8"), 15)
        self.assertTrue(all(i.ms == 2_037 for i in sweep))

    def test_every_attention_norm_elementwise_launch_block_and_scan_case_fits(self):
        # attention 60,480 // 36 = 1,680 ms each; block 45,360 // 6 = 7,560 ms each; scan
        # 11,340 // 6 = 1,890 ms each.
        self.assertEqual([(len(p.items), p.left_out) for k, p in self.parts.items()
                          if k != "gemm"], [(36, 0), (8, 0), (12, 0), (3, 0), (6, 0), (6, 0)])
        self.assertEqual(self.parts["attention"].items[0].ms, 1_680)
        self.assertEqual(self.parts["block"].items[0].ms, 7_560)
        self.assertEqual(self.parts["scan"].items[0].ms, 1_890)

    def test_hard_stop(self):
        self.assertEqual(self.plan.hard_stop_ms, 435_000)

    def test_deterministic(self):
        self.assertEqual(plan.render(plan.make_plan(420)), plan.render(self.plan))


class SmallBudgets(unittest.TestCase):
    def test_least_budget_keeps_a_prefix_of_each_list(self):
        # 60 s: reserve 10 s, 50 s for the parts; attention 50 * 16 / 100 = 8 s, so
        # 8,000 // 500 = 16 of its 36 cases fit.
        the_plan = plan.make_plan(60)
        attention = [p for p in the_plan.parts if p.kind == "attention"][0]
        self.assertEqual((len(attention.items), attention.left_out), (16, 20))
        self.assertEqual(attention.items[0].case.name, "flash fwd d128 s4096")

    def test_only_one_kind_gets_all_the_time(self):
        # --only launch at 420 s: 378 s share, but at most 10 s a case, so 30 s planned.
        part = plan.make_plan(420, ("launch",)).parts[0]
        self.assertEqual(part.ms, 378_000)
        self.assertEqual([i.ms for i in part.items], [10_000] * 3)


class Stretch(unittest.TestCase):
    def test_full_time_when_on_schedule(self):
        self.assertEqual(plan.stretch(2_000, 10_000, 12_000), 2_000)

    def test_cut_in_proportion_after_an_overrun(self):
        # 5 s left for 10 s of plan: a 2 s case gets 2,000 * 5,000 // 10,000 = 1,000 ms.
        self.assertEqual(plan.stretch(2_000, 10_000, 5_000), 1_000)

    def test_nothing_when_time_is_spent(self):
        self.assertEqual(plan.stretch(2_000, 10_000, 0), 0)
        self.assertEqual(plan.stretch(2_000, 10_000, -300), 0)

    def test_the_stretched_remainder_never_exceeds_the_time_left(self):
        rng = random.Random(7)
        for _ in range(2_000):
            items = [rng.randint(1, 5_000) for _ in range(rng.randint(1, 12))]
            left = rng.randint(-1_000, 40_000)
            used = 0
            for i, ms in enumerate(items):
                used += plan.stretch(ms, sum(items[i:]), left - used)
            self.assertLessEqual(used, max(0, left))


if __name__ == "__main__":
    unittest.main()

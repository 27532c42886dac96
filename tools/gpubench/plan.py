"""The time plan: how one run's budget is split among the parts and their cases. No torch.

All times are whole milliseconds, each share rounded down, so a plan never adds up to more than
its budget. A run follows the plan with `stretch`: each part and case gets its planned time, cut
in proportion when earlier work overran, so the run still ends inside its budget.
"""

from dataclasses import dataclass

import cases

KINDS = ("gemm", "attention", "norm", "elementwise", "launch", "block", "scan")

MIN_BUDGET_S = 60
MAX_BUDGET_S = 440
# Past the budget, a watchdog ends the run, so it ends by 440 + 15 = 455 s, inside 8 minutes.
HARD_STOP_MARGIN_S = 15

# Shares of the planned time, in per cent, when every part runs; --only renormalises them.
WEIGHTS = {"gemm": 56, "attention": 16, "norm": 5, "elementwise": 5, "launch": 3, "block": 12,
           "scan": 3}

SUSTAINED_MAX_MS = 60_000     # the "60 s or more" for the sustained set
SUSTAINED_SHARE = 0.6         # of the GEMM part, at most
SWEEP_MIN_MS = 2_000          # the sweep's "2-5 s each"
SWEEP_MAX_MS = 5_000
FP8_SWEEP_FRACTION = 1 / 3    # of the sweep shapes that fit, the rest bf16
MIN_MS = {"attention": 500, "norm": 500, "elementwise": 500, "launch": 500, "block": 2_000,
          "scan": 1_000}
MAX_MS = {"attention": 10_000, "norm": 10_000, "elementwise": 10_000, "launch": 10_000,
          "block": 20_000, "scan": 10_000}


@dataclass(frozen=True)
class Item:
    kind: str
    case: object
    ms: int


@dataclass(frozen=True)
class Part:
    kind: str
    ms: int              # the part's share
    items: tuple
    left_out: int        # cases that did not fit
    note: str

    @property
    def planned_ms(self):
        return sum(item.ms for item in self.items)


@dataclass(frozen=True)
class Plan:
    budget_ms: int
    reserve_ms: int
    parts: tuple

    @property
    def planned_ms(self):
        return sum(part.planned_ms for part in self.parts)

    @property
    def hard_stop_ms(self):
        return self.budget_ms + HARD_STOP_MARGIN_S * 1000


def reserve_ms(budget_ms):
    """Time kept out of the parts for start-up (importing torch, creating the CUDA context),
    warm-ups that run past a case's share, and writing: a tenth of the budget, at least 10 s."""
    return max(10_000, budget_ms // 10)


def make_plan(budget_s, kinds=KINDS):
    """The plan for a budget in seconds and the selected kinds (in any order; run in KINDS
    order)."""
    budget_ms = int(budget_s * 1000)
    if not MIN_BUDGET_S * 1000 <= budget_ms <= MAX_BUDGET_S * 1000:
        raise ValueError("budget must be %d..%d s, got %r" % (MIN_BUDGET_S, MAX_BUDGET_S,
                                                              budget_s))
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        raise ValueError("kinds must be a non-empty subset of %s, got %r" % (KINDS, kinds))
    selected = [kind for kind in KINDS if kind in kinds]
    reserve = reserve_ms(budget_ms)
    available = budget_ms - reserve
    total_weight = sum(WEIGHTS[kind] for kind in selected)
    parts = []
    for kind in selected:
        share = available * WEIGHTS[kind] // total_weight
        parts.append(_gemm_part(share) if kind == "gemm" else _even_part(kind, share))
    return Plan(budget_ms, reserve, tuple(parts))


_CASES = {"attention": cases.attention_cases, "norm": cases.norm_cases,
          "elementwise": cases.elementwise_cases, "launch": cases.launch_cases,
          "block": cases.block_cases, "scan": cases.scan_cases}


def _even_part(kind, share):
    items, left_out = split_even(kind, _CASES[kind](), share, MIN_MS[kind], MAX_MS[kind])
    note = "%d cases at %.2f s" % (len(items), items[0].ms / 1000 if items else 0)
    return Part(kind, share, tuple(items), left_out, note)


def split_even(kind, all_cases, share, min_ms, max_ms):
    """As many cases as fit at min_ms or more each (a prefix, in priority order), all given the
    same time, at most max_ms. Returns the items and how many cases were left out."""
    fit = min(len(all_cases), share // min_ms)
    if fit == 0:
        return [], len(all_cases)
    each = min(max_ms, share // fit)
    return [Item(kind, case, each) for case in all_cases[:fit]], len(all_cases) - fit


def _gemm_part(share):
    sustained = cases.sustained_gemms()
    each_sustained = min(SUSTAINED_MAX_MS, int(share * SUSTAINED_SHARE) // len(sustained))
    items = [Item("gemm", case, each_sustained) for case in sustained]
    sweep_ms = share - each_sustained * len(sustained)
    bf16, fp8 = cases.sweep_gemms("bf16"), cases.sweep_gemms("fp8")
    fit = sweep_ms // SWEEP_MIN_MS
    if fit >= len(bf16) + len(fp8):
        chosen = bf16 + fp8
    else:
        n_fp8 = min(len(fp8), int(fit * FP8_SWEEP_FRACTION))
        n_bf16 = min(len(bf16), fit - n_fp8)
        chosen = bf16[:n_bf16] + fp8[:n_fp8]
    each = min(SWEEP_MAX_MS, sweep_ms // len(chosen)) if chosen else 0
    items += [Item("gemm", case, each) for case in chosen]
    left_out = len(bf16) + len(fp8) - len(chosen)
    note = "%d sustained at %.2f s, %d sweep shapes at %.2f s" % (
        len(sustained), each_sustained / 1000, len(chosen), each / 1000)
    return Part("gemm", share, tuple(items), left_out, note)


def stretch(planned_ms, remaining_planned_ms, time_left_ms):
    """The time a part or case may take now: its planned time, cut in proportion when less time is
    left than the planned time of everything still to run (this one included); never negative."""
    if time_left_ms <= 0 or planned_ms <= 0:
        return 0
    if remaining_planned_ms <= time_left_ms:
        return planned_ms
    return planned_ms * time_left_ms // remaining_planned_ms


def render(plan):
    """The plan as text, for --list."""
    lines = ["gpubench time plan: budget %.0f s = %.1f s planned for %s + %.1f s reserved "
             "(start-up, warm-ups, writing); a watchdog stops the run at %.0f s"
             % (plan.budget_ms / 1000, plan.planned_ms / 1000,
                ", ".join(part.kind for part in plan.parts), plan.reserve_ms / 1000,
                plan.hard_stop_ms / 1000)]
    for part in plan.parts:
        lines.append("")
        left = ", %d left out for time" % part.left_out if part.left_out else ""
        lines.append("%s: %.1f s planned of a %.1f s share (%s%s)" % (
            part.kind, part.planned_ms / 1000, part.ms / 1000, part.note, left))
        for item in part.items:
            lines.append("  %7.2f s  %-5s %-34s %s" % (item.ms / 1000, item.case.dtype,
                                                        item.case.name, item.case.params))
    lines.append("")
    lines.append("total: %d cases, %.1f s planned of %.0f s"
                 % (sum(len(part.items) for part in plan.parts), plan.planned_ms / 1000,
                    plan.budget_ms / 1000))
    lines.append("fp8 cases run only where the GPU has fp8 matrix units (compute capability 8.9+) "
                 "and torch has torch._scaled_mm; an SDPA backend that the GPU or torch lacks, or "
                 "fp8 without them, is written as 'unavailable' and its time is not used.")
    return "\n".join(lines) + "\n"

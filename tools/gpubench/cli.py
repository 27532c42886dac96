"""Command-line arguments of gpubench, checked once. No torch.

Every mistake a user can make raises UsageError with one line that says what was wrong and how to
fix it; gpubench.py prints it and exits 2.
"""

import argparse
import math
from dataclasses import dataclass
from typing import Optional

import plan

DEFAULT_BUDGET_S = 420

# Exit codes, in one place.
EXIT_OK = 0
EXIT_USAGE = 2          # a bad argument, or an --out that cannot be written
EXIT_NO_DEVICE = 3      # no importable torch, or no CUDA GPU (--list needs neither)
EXIT_WATCHDOG = 4       # the hard stop ended a run that had not finished
EXIT_INTERRUPTED = 130  # Ctrl-C; the rows written so far stay in the CSV


class UsageError(Exception):
    """A bad command line; the message is one line."""


@dataclass(frozen=True)
class Options:
    out: Optional[str]
    force: bool
    budget_s: float
    kinds: tuple
    list_only: bool


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _parser():
    p = _Parser(
        prog="gpubench", allow_abbrev=False,
        description="Measures one NVIDIA GPU for meshplan: sustained GEMMs (bf16, fp8), SDPA "
                    "attention, norm and elementwise bandwidth, launch cost and whole transformer "
                    "blocks, into one CSV, inside a time budget.")
    p.add_argument("--out", metavar="FILE",
                   help="the CSV to write; it must not exist (or add --force); never a symbolic "
                        "link")
    p.add_argument("--force", action="store_true", help="replace an existing regular --out file")
    p.add_argument("--budget-seconds", metavar="S", default=str(DEFAULT_BUDGET_S),
                   help="seconds the whole run may take, %d..%d (default %d); a watchdog stops it "
                        "%d s past that" % (plan.MIN_BUDGET_S, plan.MAX_BUDGET_S,
                                            DEFAULT_BUDGET_S, plan.HARD_STOP_MARGIN_S))
    p.add_argument("--only", metavar="KIND[,KIND]",
                   help="measure only these kinds: %s" % ",".join(plan.KINDS))
    p.add_argument("--list", action="store_true",
                   help="print what would be measured and the time plan, then exit; needs "
                        "neither torch nor a GPU")
    return p


def parse(argv):
    """Options from argv (without the program name); raises UsageError."""
    ns = _parser().parse_args(argv)
    budget = _budget(ns.budget_seconds)
    kinds = _kinds(ns.only) if ns.only is not None else plan.KINDS
    if not ns.list and not ns.out:
        raise UsageError("--out FILE is required (or --list to print the plan); "
                         "for example --out gpubench.csv")
    if ns.out is not None and not ns.out.strip():
        raise UsageError("--out is empty: give the path of a new file")
    return Options(ns.out, ns.force, budget, kinds, ns.list)


def _budget(text):
    try:
        value = float(text)
    except ValueError:
        raise UsageError("--budget-seconds must be a number of seconds, got %r" % text) from None
    if math.isnan(value) or not plan.MIN_BUDGET_S <= value <= plan.MAX_BUDGET_S:
        raise UsageError("--budget-seconds must be from %d to %d (the run must end inside 8 "
                         "minutes), got %s" % (plan.MIN_BUDGET_S, plan.MAX_BUDGET_S, text))
    return value


def _kinds(text):
    names = [name.strip() for name in text.split(",")]
    if not any(names):
        raise UsageError("--only needs at least one kind: %s" % ",".join(plan.KINDS))
    unknown = [name for name in names if name not in plan.KINDS]
    if unknown or "" in names:
        bad = unknown[0] if unknown else ""
        raise UsageError("--only: unknown kind %r; the kinds are %s" % (bad, ",".join(plan.KINDS)))
    return tuple(kind for kind in plan.KINDS if kind in names)

"""Runs a plan on one GPU and writes its CSV. torch comes in as an argument, from gpubench.py,
which imports it only after the arguments and the output path have been checked.

The run follows the plan's shares with plan.stretch: a part or case that overran takes its time
from the ones after it, in proportion, so the run ends inside its budget; gpubench.py's watchdog
ends the process at the hard stop if a case never returns, after this module's last row.
"""

import datetime
import gc
import os
import platform

import bench_attention
import bench_block
import bench_gemm
import bench_launch
import bench_memory
import bench_scan
import cli
from bench_common import Env, Result, Unavailable, first_line
from csvout import ERROR, SKIPPED, UNAVAILABLE, CsvWriter, OutputRefused, Row, open_target
from nvml_sampler import Means, NvmlSampler, nvml_index
from plan import stretch
from timing import CudaTimer

MEASURE = {"gemm": bench_gemm.measure, "attention": bench_attention.measure,
           "norm": bench_memory.measure_norm, "elementwise": bench_memory.measure_elementwise,
           "launch": bench_launch.measure, "block": bench_block.measure,
           "scan": bench_scan.measure}
UNITS = {"gemm": "TFLOP/s", "attention": "TFLOP/s", "norm": "GB/s", "elementwise": "GB/s",
         "launch": "us/kernel", "block": "ms", "scan": "ms"}

MIN_ITEM_MS = 200       # a case left less time than this is written as skipped
TAIL_MS = 3_000         # kept at the end of the budget for closing the file and NVML
DEFAULT_L2_BYTES = 50 * 2**20


def run(opts, the_plan, started, torch, clock, log, warn, watchdog=None):
    """Measures `the_plan` and writes opts.out; returns an exit code. `log` takes progress lines,
    `warn` one-line problems; `watchdog`, already running, gets the last row to write if it
    fires."""
    torch.zeros(1, device="cuda")  # creates the CUDA context outside any timed case
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES
    env = Env(torch, "cuda", CudaTimer(torch), l2, clock)
    sampler = NvmlSampler(clock=clock)
    uuid = getattr(props, "uuid", None)
    sampler.start(uuid=("GPU-%s" % uuid) if uuid else None,
                  index=nvml_index(os.environ.get("CUDA_VISIBLE_DEVICES")))
    try:
        stream = open_target(opts.out, opts.force)
    except OutputRefused as e:
        sampler.stop()
        warn(str(e))
        return cli.EXIT_USAGE
    writer = CsvWriter(stream)
    writer.metadata(metadata(torch, props, l2, sampler, the_plan, opts))
    writer.header()
    if watchdog is not None:
        watchdog.last_words = lambda: writer.try_row(Row(
            "run", "watchdog", "hard stop %.0f s after start; the case then running had not "
            "returned" % (clock() - started), "", ERROR, ""), timeout_s=2.0)
    soft_end = started + (the_plan.budget_ms - TAIL_MS) / 1000
    try:
        execute(the_plan, env, writer, sampler, soft_end,
                lambda row: log(_line(row, clock() - started)))
    finally:
        sampler.stop()
        writer.close()
    log("wrote %d rows to %s in %.0f s" % (writer.rows, opts.out, clock() - started))
    if sampler.error:
        warn("no clocks, power or temperature in the CSV: " + sampler.error)
    return cli.EXIT_OK


def execute(the_plan, env, writer, sampler, soft_end, log):
    """Measures every case of the plan in order, giving each its stretched share, and writes each
    result as it comes."""
    clock = env.clock
    parts = the_plan.parts
    for p, part in enumerate(parts):
        now = clock()
        part_ms = stretch(part.planned_ms, sum(q.planned_ms for q in parts[p:]),
                          int((soft_end - now) * 1000))
        part_end = now + part_ms / 1000
        for i, item in enumerate(part.items):
            now = clock()
            item_ms = stretch(item.ms, sum(it.ms for it in part.items[i:]),
                              int((part_end - now) * 1000))
            if item_ms < MIN_ITEM_MS:
                results = [_note(item, SKIPPED, "skipped: the part's time was spent", now)]
            else:
                results = run_item(env, item, item_ms / 1000, now + item_ms / 1000)
            for result in results:
                _add_nvml(result, sampler)
                writer.row(result.row)
                log(result.row)


def run_item(env, item, seconds, deadline):
    """One case's results; a case the GPU or torch cannot run, or that fails, becomes one row that
    says so, and the run goes on."""
    started = env.clock()
    try:
        return MEASURE[item.kind](env, item.case, seconds, deadline)
    except Unavailable as e:
        return [_note(item, UNAVAILABLE, "unavailable: " + first_line(e), started)]
    except Exception as e:  # noqa: BLE001 - one failed case (out of memory, say) is one row
        return [_note(item, ERROR, "error: %s: %s" % (type(e).__name__, first_line(e)),
                      started)]
    finally:
        gc.collect()
        if env.device == "cuda":
            env.torch.cuda.empty_cache()


def _note(item, value, reason, t):
    case = item.case
    row = Row(item.kind, case.name, "%s | %s" % (case.params, reason), case.dtype, value,
              UNITS[item.kind])
    return Result(row, t, t)


def _add_nvml(result, sampler):
    means = sampler.means(result.t0, result.t1) if result.t1 > result.t0 else Means()
    row = result.row
    row.sm_clock_mhz, row.power_w, row.temp_c = means.sm_clock_mhz, means.power_w, means.temp_c
    if result.nvml_value:
        row.value = getattr(means, result.nvml_value)


def _line(row, elapsed):
    value = row.cells()[4]
    return "%6.1fs  %-11s %-4s %-40s %10s %s" % (elapsed, row.kind, row.dtype, row.name, value,
                                                 row.unit)


def metadata(torch, props, l2, sampler, the_plan, opts):
    """The `#` lines: what was measured, on what, with what, when."""
    nvml = sampler.static_info()
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    nvml_state = ("sampled every 0.1 s, device by %s" % sampler.device_via if sampler.running
                  else sampler.error or "not started")
    return [
        ("gpubench", "meshplan tools/gpubench; formulas and columns in tools/gpubench/README.md"),
        ("date_utc", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("gpu", props.name),
        ("compute_capability", "%d.%d" % (props.major, props.minor)),
        ("multiprocessors", props.multi_processor_count),
        ("memory_gib", "%.1f" % (props.total_memory / 2**30)),
        ("l2_cache_bytes", l2),
        ("driver", nvml["driver"]),
        ("cuda", torch.version.cuda or "n/a"),
        ("cudnn", cudnn if cudnn is not None else "n/a"),
        ("torch", torch.__version__),
        ("python", platform.python_version()),
        ("power_limit_w", nvml["power_limit_w"]),
        ("max_sm_clock_mhz", nvml["max_sm_clock_mhz"]),
        ("max_mem_clock_mhz", nvml["max_mem_clock_mhz"]),
        ("nvml", nvml_state),
        ("budget_s", "%.0f" % (the_plan.budget_ms / 1000)),
        ("kinds", ",".join(part.kind for part in the_plan.parts)),
        ("planned", "%d cases, %.1f s" % (sum(len(p.items) for p in the_plan.parts),
                                          the_plan.planned_ms / 1000)),
        ("values", "a number, or unavailable / error / skipped with the reason after '|' in "
                   "shape/params; n/a where NVML gave no reading"),
    ]

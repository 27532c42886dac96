#!/usr/bin/env python3
"""gpubench: measures one NVIDIA GPU for meshplan inside a time budget and writes one CSV.

    python3 tools/gpubench/gpubench.py --out gpubench.csv
    python3 tools/gpubench/gpubench.py --list

Exit codes (cli.py): 0 done, 2 bad arguments or output path, 3 no torch or no CUDA GPU,
4 stopped by the watchdog, 130 interrupted. See README.md beside this file.
"""

import os
import sys
import time

STARTED = time.monotonic()  # the budget counts from here, torch's import included

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cli  # noqa: E402 - after the path is set
import csvout  # noqa: E402
import plan  # noqa: E402
import watchdog  # noqa: E402


class NoDevice(Exception):
    """No importable torch, or no CUDA GPU visible to it."""


def probe_torch():
    """The torch module, once it is known to see a CUDA GPU; NoDevice otherwise."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - a broken install is as good as none
        raise NoDevice("PyTorch cannot be imported (%s: %s); install torch with CUDA support, "
                       "or use --list, which needs neither torch nor a GPU"
                       % (type(e).__name__, " ".join(str(e).split()))) from None
    try:
        available = torch.cuda.is_available()
    except Exception as e:  # noqa: BLE001
        raise NoDevice("torch %s cannot query CUDA (%s)" % (getattr(torch, "__version__", "?"),
                                                            e)) from None
    if not available:
        raise NoDevice("torch %s sees no CUDA GPU (built for CUDA %s); run this on a machine with "
                       "an NVIDIA GPU, or use --list"
                       % (getattr(torch, "__version__", "?"),
                          getattr(getattr(torch, "version", None), "cuda", None)))
    return torch


def main(argv=None, stdout=None, stderr=None, started=None):
    """Runs gpubench; returns the exit code. `started` (time.monotonic) is when the budget began:
    the process start when run as a script, the call otherwise."""
    started = time.monotonic() if started is None else started
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr

    def warn(message):
        stderr.write("gpubench: %s\n" % " ".join(str(message).split()))
        stderr.flush()

    def log(line):
        stdout.write(line + "\n")
        stdout.flush()

    try:
        opts = cli.parse(sys.argv[1:] if argv is None else argv)
    except cli.UsageError as e:
        warn(e)
        return cli.EXIT_USAGE
    the_plan = plan.make_plan(opts.budget_s, opts.kinds)
    if opts.list_only:
        stdout.write(plan.render(the_plan))
        return cli.EXIT_OK
    try:
        csvout.check_target(opts.out, opts.force)
    except csvout.OutputRefused as e:
        warn(e)
        return cli.EXIT_USAGE

    def hard_stop():
        warn("hard stop %.0f s after the start: a case did not return; %s keeps the rows "
             "measured so far" % (time.monotonic() - started, opts.out))
        os._exit(cli.EXIT_WATCHDOG)

    # From here on a hang anywhere (importing torch, creating the CUDA context, a kernel) ends
    # at the hard stop.
    dog = watchdog.Watchdog(started + the_plan.hard_stop_ms / 1000, hard_stop).start()
    try:
        torch = probe_torch()
        import runner  # imports no torch itself; torch is handed to it
        return runner.run(opts, the_plan, started, torch, time.monotonic, log, warn, dog)
    except NoDevice as e:
        warn(e)
        return cli.EXIT_NO_DEVICE
    except KeyboardInterrupt:
        warn("interrupted; %s keeps the rows measured so far" % opts.out)
        return cli.EXIT_INTERRUPTED
    finally:
        dog.cancel()


if __name__ == "__main__":
    sys.exit(main(started=STARTED))

"""Shared by the tests: puts tools/gpubench on the path and runs gpubench.py as a process."""

import io
import os
import subprocess
import sys

KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(KIT, "gpubench.py")
if KIT not in sys.path:
    sys.path.insert(0, KIT)


def run_main(argv):
    """gpubench.main in this process: (exit code, stdout, stderr)."""
    import gpubench
    out, err = io.StringIO(), io.StringIO()
    code = gpubench.main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_process(argv, pythonpath=None, cwd=None):
    """gpubench.py as its own process, with `pythonpath` put first on the module path."""
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, SCRIPT] + list(argv), capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=60, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def fake_torch(folder, body):
    """A package named torch in `folder` whose __init__ is `body`, to stand in for PyTorch."""
    package = os.path.join(folder, "torch")
    os.makedirs(package)
    with open(os.path.join(package, "__init__.py"), "w") as f:
        f.write(body)
    return folder

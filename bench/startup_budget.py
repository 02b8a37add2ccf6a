"""Start-up budget of the CLI (issue 19): ``python -X importtime`` per command, against a budget.

For each command below the script runs ``python -X importtime -m aifabric ...`` once to warm up,
then ``--repeat`` times (default 3) and reports the median of: the whole process's wall time, the summed import time of
the top-level imports (importtime's cumulative column at depth 0, in ms) and the heavy packages the
command loaded. It exits 1 when a median import time exceeds its budget or a command loads a heavy
package it does not need, so it can run in CI (``python bench/startup_budget.py``). Budgets are
import time only (not the run itself), set with headroom over the medians measured on a loaded
2-core machine (bench/RESULTS.md, "Start-up"); ``--markdown`` prints a table.

With an ahead-of-time kernel build current (``python -m aifabric.sim.aot --check``), ``simulate``
must not load numba either (the build replaces the JIT kernels); the table says which kernel ran.

    PYTHONPATH=src python bench/startup_budget.py [--repeat N] [--markdown]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "pandas",
    "pyarrow",
    "plotly",
    "pydantic",
    "numba",
    "scipy",
    "yaml",
    "numpy",
    "rich",
    "jinja2",
    "ray",
)
# (label, argv, import budget in ms, heavy packages it must not load). Budgets: the medians measured
# on the shared 2-core machine at load average ~10 (746 / 289 / 1005 / 2437 ms, bench/RESULTS.md
# "Start-up") plus ~35 % headroom; to be tightened from a quiet machine's run
COMMANDS = [
    (
        "--help",
        ["--help"],
        600,
        ("pandas", "pyarrow", "plotly", "pydantic", "numba", "scipy", "numpy", "ray"),
    ),
    (
        "--version",
        ["--version"],
        400,
        ("pandas", "pyarrow", "plotly", "pydantic", "numba", "scipy", "numpy", "rich"),
    ),
    (
        "simulate --help",
        ["simulate", "--help"],
        1500,
        (
            "pandas",
            "pyarrow",
            "plotly",
            "numba",
            "scipy",
            "numpy",
        ),  # typer's parameter coercion loads pydantic
    ),
    (
        "simulate incast32 --json",
        ["simulate", "scenarios/incast32.yaml", "--json", "--no-progress"],
        3500,
        ("pandas", "pyarrow", "plotly", "scipy", "rich", "ray"),
    ),
]
# ``python -m aifabric ARGV`` that reports, at exit, which heavy packages are in sys.modules
# (importtime also lists an import that failed, e.g. numba's optional probe of scipy)
_WRAP = (
    "import atexit, sys, runpy\n"
    f"H = {HEAVY!r}\n"
    "atexit.register(lambda: print('LOADED', *[h for h in H if h in sys.modules], file=sys.stderr))\n"
    "sys.argv = ['aifabric', *sys.argv[1:]]\n"
    "runpy.run_module('aifabric', run_name='__main__')\n"
)
_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S+)")


def measure(argv: list[str]) -> tuple[float, float, set[str]]:
    """(wall s, top-level import ms, heavy packages loaded) of one ``python -X importtime`` run."""
    # bytecode is written and reused, as for an installed package (a PYTHONDONTWRITEBYTECODE
    # environment would recompile every module of the package on every start: ~0.1-0.3 s more)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _WRAP, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    wall = time.perf_counter() - t
    total_us, loaded = 0, set()
    for line in p.stderr.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        cum, indent = int(m.group(2)), len(m.group(3))
        if indent == 1:  # a top-level import (importtime indents by depth, one space at depth 0)
            total_us += cum
    for line in p.stderr.splitlines():
        if line.startswith("LOADED"):
            loaded = set(line.split()[1:])
    return wall, total_us / 1000, loaded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    chk = subprocess.run(
        [sys.executable, "-m", "aifabric.sim.aot", "--check"], capture_output=True, cwd=ROOT, env=env
    )
    aot = chk.returncode == 0 and os.environ.get("AIFABRIC_AOT", "") != "0"
    rows, bad = [], []
    for label, argv, budget, forbidden in COMMANDS:
        if aot and argv[0] == "simulate" and "--help" not in argv:
            forbidden = (*forbidden, "numba")
        measure(argv)  # warm-up (not counted): bytecode and numba's kernel cache written
        runs = [measure(argv) for _ in range(a.repeat)]
        wall = statistics.median(r[0] for r in runs)
        imp = statistics.median(r[1] for r in runs)
        loaded = runs[-1][2]
        extra = sorted(loaded & set(forbidden))
        ok = imp <= budget and not extra
        if not ok:
            bad.append(label)
        rows.append((label, wall, imp, budget, ", ".join(sorted(loaded)) or "-", ", ".join(extra) or "-", ok))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if a.markdown:
        print(f"load average (1 min) {load:.2f}, median of {a.repeat}, kernel {'aot' if aot else 'jit'}\n")
        print(
            "| command | process (s) | imports (ms) | budget (ms) | heavy packages loaded | not needed | ok |"
        )
        print("|---|---:|---:|---:|---|---|---|")
        for r in rows:
            print(
                f"| `aifabric {r[0]}` | {r[1]:.2f} | {r[2]:.0f} | {r[3]} | {r[4]} | {r[5]} | {'yes' if r[6] else 'NO'} |"
            )
    else:
        for r in rows:
            print(
                f"{r[0]:28s} process {r[1]:.2f} s  imports {r[2]:.0f} ms (budget {r[3]})  loaded: {r[4]}  "
                f"not needed: {r[5]}  {'ok' if r[6] else 'OVER'}"
            )
        print(f"load average (1 min) {load:.2f}, kernel {'aot' if aot else 'jit'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Instructions the packet kernel executes on a scenario, counted by valgrind (callgrind): a measure
of a hot-path change that the load of a shared machine does not move (wall time there moves ±30 %).

Runs one ``engine.compile_scenario`` + ``engine.run_state`` of ``scenarios/CASE.yaml`` under
``valgrind --tool=callgrind`` with the ahead-of-time kernel (build it first: ``python -m
aifabric.sim.aot``; JIT code has no symbols under valgrind) and sums the instructions of the
kernel's functions (``run``, ``try_send``, …: the AOT build's symbols ``aifabric::sim::kernel::*``)
and of numba's reference counting (``NRT_incref`` / ``NRT_decref``), which inlined helpers can add.
Needs ``valgrind`` and ``callgrind_annotate`` on the PATH; about 30 s (incast32) to 90 s (perm128).

    PYTHONPATH=src python bench/kernel_instructions.py incast32 perm128
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"\s*([\d,]+) \([\s\d.]+%\)\s+(.*)")


def _child(case: str) -> None:
    from aifabric.cli._preflight import prepare
    from aifabric.sim import engine
    from aifabric.sim.aot import uses_aot
    from aifabric.workload.traffic import flow_columns

    if not uses_aot():
        sys.exit("no current ahead-of-time build of the kernel: run python -m aifabric.sim.aot first")
    prep = prepare(ROOT / "scenarios" / f"{case}.yaml", None, None, False, json_flows=False)
    sc, topo = prep.scenario, prep.topology
    st = engine.compile_scenario(sc, topo, flow_columns(sc, topo))
    engine.run_state(st, sc.sim.until_ps, None, max_events=sc.sim.max_events)
    print(int(st.g[engine.K.G_EVENTS]))


def count(case: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        p = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                case,
            ],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            raise RuntimeError(f"{case}: exit {p.returncode}: {p.stderr[-2000:]}")
        events = int(p.stdout.split()[-1])
        text = subprocess.run(
            ["callgrind_annotate", "--threshold=100", str(out)], capture_output=True, text=True, check=True
        ).stdout
    funcs: dict[str, int] = {}
    nrt = 0
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        n, where = int(m.group(1).replace(",", "")), m.group(2)
        f = re.search(r"aifabric::sim::kernel::(\w+)", where)
        if f:
            funcs[f.group(1)] = funcs.get(f.group(1), 0) + n
        elif re.search(r"\bNRT_(incref|decref)\b", where):
            nrt += n
    total = sum(funcs.values()) + nrt
    return {
        "case": case,
        "events": events,
        "kernel_instructions": total,
        "functions": funcs,
        "nrt_refcount": nrt,
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1])
        return 0
    for case in argv or ["incast32"]:
        print(json.dumps(count(case)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Paired wall time and peak memory: our packet engine's Ultra Ethernet transport against the UEC's
own simulator (htsim_uec from github.com/ultraethernet/uet-htsim, built outside this repository)
on the shipped UET scenarios, each side as a whole process.

    .venv/bin/python bench/uet_bench.py /path/to/htsim_uec [--repeat 3]

Ours: ``aifabric simulate SCENARIO --json --no-progress`` (warm kernel cache, as bench/sim_bench.py
runs it). htsim: the command line recorded with its FCTs in
``src/aifabric/data/reference/uet-htsim.json`` (htsim's default load balancing with trimming, the
same flows), run in a scratch folder with stdout to a file. Runs alternate (paired under the same
load); the median of ``--repeat`` is printed as a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("sim_bench", Path(__file__).with_name("sim_bench.py"))
sim_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sim_bench)
REFERENCE = ROOT / "src/aifabric/data/reference/uet-htsim.json"
VARIANT = "trimming, mixed load balancing (htsim default)"
CASES = ("scenarios/incast32-uet.yaml", "scenarios/perm128-uet.yaml", "scenarios/alltoall16-uet.yaml")


def htsim_once(binary: str, scenario: str) -> dict:
    ref = json.loads(REFERENCE.read_text())["scenarios"][scenario][VARIANT]
    args = ref["command"].split()[1:]
    with tempfile.TemporaryDirectory() as tmp:
        if scenario.endswith("alltoall16-uet.yaml"):  # its connection matrix is written from our flows
            spec = importlib.util.spec_from_file_location("ref", ROOT / "scripts/uet_htsim_reference.py")
            ref_mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(ref_mod)
            cm = Path(tmp) / "alltoall16.cm"
            ref_mod.a2a_matrix(cm)
            args[args.index("-tm") + 1] = str(cm)
        else:
            args[args.index("-tm") + 1] = str(ROOT / args[args.index("-tm") + 1])
        with open(Path(tmp) / "stdout.txt", "w") as out:
            p = subprocess.run(
                ["/usr/bin/time", "-v", binary, *args], stdout=out, stderr=subprocess.PIPE, text=True, cwd=tmp
            )
    if p.returncode != 0:
        raise RuntimeError(f"htsim_uec {scenario}: exit {p.returncode}: {p.stderr[-800:]}")
    wall = sim_bench._gnu_time(p.stderr, r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)")
    rss = float(sim_bench.re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return {"wall_s": wall, "rss_mib": rss / 1024}


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    binary, repeat = argv[0], int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(
        "| scenario | ours wall s | of it, the engine s | htsim_uec wall s | ours / htsim | ours peak MiB "
        "| htsim peak MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case in CASES:
        sim_bench.run_once(ROOT / case)  # warm the kernel cache
        ours, peer = [], []
        for _ in range(repeat):
            ours.append(sim_bench.run_once(ROOT / case))
            peer.append(htsim_once(binary, case))
        ow = statistics.median(r["wall_s"] for r in ours)
        hw = statistics.median(r["wall_s"] for r in peer)
        om = statistics.median(r["rss_mib"] for r in ours)
        oe = statistics.median(r["engine_wall_s"] for r in ours)
        hm = statistics.median(r["rss_mib"] for r in peer)
        print(
            f"| {Path(case).stem} | {ow:.2f} | {oe:.2f} | {hw:.2f} | {ow / hw:.2f}× | {om:.0f} | {hm:.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

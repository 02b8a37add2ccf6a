"""Packet-engine benchmark: whole-process wall time, peak RSS and data packets per wall-second.

Each case runs ``aifabric simulate SCENARIO --json`` in a fresh process under ``/usr/bin/time -v``
(falling back to ``resource.getrusage`` of the child), after one warm-up run so the numba kernel
cache is hot. Median of ``--repeat`` runs; the 1-minute load average before each case is reported
(the machine is shared). Cases: the peer scenarios (peer-baselines.md) and a
fat-tree scaling series (k = 8, 16, 24, permutation of 2 MB flows).

Memory: each case also reports the memory guard's estimate for the run (the packet engine's
``estimate_bytes``, the largest of the checks ``aifabric simulate`` makes before it allocates,
:mod:`aifabric.memory`) next to the measured peak RSS above a 2-flow run's (the interpreter,
numpy, pydantic, typer and — with the JIT kernel — numba, which the estimate does not count).
The kernel column says which kernel ran: ``aot`` when an ahead-of-time build matches the sources
(``python -m aifabric.sim.aot``), else ``jit``; ``--jit`` forces numba's JIT (``AIFABRIC_AOT=0``).

    .venv/bin/python bench/sim_bench.py [--repeat 3] [--no-scaling] [--markdown] [--jit] [--htsim BIN]

``--htsim BIN`` runs htsim's RoCE binary (csg-htsim's ``htsim_roce``, built separately) on the
peer scenario files of perm128, incast32 and perm1024, alternating with ours, and prints the
paired ratios (same machine, same run). Each side runs one fixed ECMP draw in every repeat: ours
the scenario's seed, htsim ``-seed 13`` with its clock-seeded path ids fixed by
``htsim_fixed_time.c`` (built with ``cc`` into a temporary folder, LD_PRELOAD); the table says
whether every htsim run finished the same flows at the same times.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER = ["perm128", "perm128-dcqcn", "incast32", "incast32-ib", "perm1024"]
# s, 2-core machine: issue 19 (incast32 <= 0.35 s, perm128 <= 1.0x htsim, perm1024 <= 0.35x htsim),
# perm128-dcqcn from the first brief
TARGETS = {"perm128": 0.43, "perm128-dcqcn": 0.6, "incast32": 0.35, "perm1024": 4.0}
PEER_WALL = {
    "perm128": "htsim 0.43 s",
    "perm128-dcqcn": "ns-3 1.70 s",
    "incast32": "htsim 0.09 s",
    "incast32-ib": "—",
    "perm1024": "htsim 11.5 s",
}

SCALING = """name: fat-tree-k{k}-permutation
seed: 1
topology: {{kind: fat-tree, k: {k}, link_rate: 100Gbps, link_delay: 1us}}
fabric:
  technology: roce
  mtu: 4000B
  header: 64B
  switch_buffer: 32MiB
  pfc: {{enabled: true, mode: static, xoff: 60960B, xon: 48768B}}
  ecn: {{enabled: false}}
  routing: ecmp
workload: {{kind: permutation, flow_size: 2MB}}
sim: {{until: 100ms}}
"""


def aifabric_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("aifabric")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "aifabric"]


TINY = """name: tiny
topology: {kind: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}
workload: {kind: incast, senders: 2, receiver: 0, flow_size: 8KB}
sim: {until: 1ms}
"""
ENV = dict(os.environ)


def guard_estimate_mib(scenario: Path) -> float:
    """The memory guard's estimate of a packet run of ``scenario`` (MiB), as the CLI checks it."""
    sys.path.insert(0, str(ROOT / "src"))
    from aifabric.cli._preflight import checked_topology
    from aifabric.scenario import load_scenario
    from aifabric.sim.engine import estimate_bytes
    from aifabric.workload.traffic import estimate_flow_count

    sc = load_scenario(scenario)
    topo = checked_topology(sc)
    maxhop = 2 * int(topo.node_tier.max(initial=0)) + 2
    nf = estimate_flow_count(sc, topo)
    return estimate_bytes(nf, topo.num_links, maxhop, sc.fabric, json_flows=True) / 2**20


def kernel_kind() -> str:
    p = subprocess.run(
        [sys.executable, "-m", "aifabric.sim.aot", "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
    )
    return "aot" if p.returncode == 0 and ENV.get("AIFABRIC_AOT", "") != "0" else "jit"


def run_once(scenario: Path) -> dict:
    cmd = aifabric_cmd() + ["simulate", str(scenario), "--json", "--no-progress"]
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if timer:
        p = subprocess.run([timer, "-v", *cmd], capture_output=True, text=True, cwd=ROOT, env=ENV)
        wall = _gnu_time(p.stderr, r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)")
        rss_kb = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    else:  # pragma: no cover
        import time

        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV)
        wall = time.perf_counter() - t0
        rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{scenario}: exit {p.returncode}: {p.stderr[-2000:]}")
    d = json.loads(p.stdout)
    return {
        "wall_s": wall,
        "rss_mib": rss_kb / 1024,
        "packets": d["engine"]["packets"],
        "events": d["engine"]["events"],
        "engine_wall_s": d["engine"]["wall_s"],
        "fct_p50_us": d["summary"]["fct_p50_us"],
        "fct_max_us": d["summary"]["fct_max_us"],
        "pause_frames": d["summary"]["pause_frames"],
    }


# htsim's RoCE binary (Broadcom/csg-htsim, sim/datacenter/htsim_roce) on the same cases, as
# peer-baselines.md describes them: the connection matrices in ../shared/reference/peer-scenarios,
# 3-tier fat tree, 100 Gb/s, 1 us per hop, no switch latency, PFC pause above 15 / resume below 12
# packets, ECMP at the switches (one path entropy per flow: -paths 1), no congestion control; -end
# long enough for every flow to finish. -q 1000: switch queues of 1000 packets, so that the lossless
# queues never overflow (with htsim's default size they do, and it prints "LOSSLESS not working!"
# once per packet: 1.07 M lines on perm1024). The ECMP draw is fixed: -seed fixes the switches'
# hash salts and htsim_fixed_time.c (LD_PRELOAD) the path ids htsim otherwise draws from the clock.
PEER_DIR = ROOT.parent / "shared" / "reference" / "peer-scenarios"
HTSIM = {
    "perm128": ("perm128_2MB.cm", 128, 2_000),
    "incast32": ("incast32to1_128_2MB.cm", 128, 6_000),
    "perm1024": ("perm1024_2MB.cm", 1024, 5_000),
}
HTSIM_SEED, HTSIM_TIME = 13, 1


def htsim_shim(folder: Path) -> Path:
    """bench/htsim_fixed_time.c built into ``folder`` (a shared library for LD_PRELOAD)."""
    lib = folder / "libhtsim_fixed_time.so"
    src = Path(__file__).with_name("htsim_fixed_time.c")
    subprocess.run(
        [os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-o", str(lib), str(src)], check=True
    )
    return lib


def htsim_command(binary: str, name: str, shim: Path, log: Path) -> list[str]:
    cm, nodes, end_us = HTSIM[name]
    return [
        "env", f"LD_PRELOAD={shim}", f"HTSIM_TIME={HTSIM_TIME}",
        binary, "-tm", str(PEER_DIR / cm), "-nodes", str(nodes),
        "-strat", "ecmp_host", "-paths", "1", "-mtu", "4000", "-linkspeed", "100000", "-hop_latency", "1",
        "-switch_latency", "0", "-pfc_thresholds", "12", "15", "-q", "1000", "-seed", str(HTSIM_SEED),
        "-end", str(end_us), "-o", str(log),
    ]  # fmt: skip


def htsim_once(binary: str, name: str, shim: Path) -> dict:
    import hashlib

    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["/usr/bin/time", "-v", *htsim_command(binary, name, shim, Path(tmp) / "logout.dat")]
        # htsim prints a line per flow event on stdout: to a file, as one would run it (through a
        # pipe it is ~0.2 s slower); its "finished" lines are counted and hashed (the same draw
        # gives the same lines), and so are its "LOSSLESS not working!" warnings (none expected)
        with open(Path(tmp) / "stdout.txt", "w") as out:
            p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True, cwd=tmp)
        text = (Path(tmp) / "stdout.txt").read_text()
    if p.returncode != 0:
        raise RuntimeError(f"htsim {name}: exit {p.returncode}: {p.stderr[-1000:]}")
    done = [line for line in text.splitlines() if " finished at " in line]
    wall = _gnu_time(p.stderr, r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)")
    rss_kb = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return {
        "wall_s": wall,
        "rss_mib": rss_kb / 1024,
        "finished": len(done),
        "lossless_warnings": text.count("LOSSLESS not working"),
        "digest": hashlib.sha256("\n".join(done).encode()).hexdigest()[:12],
    }


def _gnu_time(text: str, pattern: str) -> float:
    v = re.search(pattern, text).group(1)
    parts = [float(x) for x in v.split(":")]
    s = 0.0
    for x in parts:
        s = s * 60 + x
    return s


def bench(scenario: Path, repeat: int, htsim: str | None = None, shim: Path | None = None) -> dict:
    load = os.getloadavg()[0]  # before this case's runs, as `uptime` shows it
    run_once(scenario)  # warm the kernel cache
    peer = []
    runs = []
    for _ in range(repeat):  # ours and htsim's alternately: paired, same load, each on its fixed draw
        runs.append(run_once(scenario))
        if htsim:
            peer.append(htsim_once(htsim, scenario.stem, shim))
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "rss_mib", "engine_wall_s")}
    out = dict(runs[0])
    out.update(med)
    out["pkts_per_wall_s"] = out["packets"] / out["wall_s"]
    out["runs_wall_s"] = [round(r["wall_s"], 2) for r in runs]
    out["load_avg_1min"] = round(load, 2)
    out["estimate_mib"] = guard_estimate_mib(scenario)
    if peer:
        out["htsim_wall_s"] = statistics.median(r["wall_s"] for r in peer)
        out["htsim_rss_mib"] = statistics.median(r["rss_mib"] for r in peer)
        out["htsim_runs_wall_s"] = [round(r["wall_s"], 2) for r in peer]
        out["htsim_finished"] = min(r["finished"] for r in peer)
        out["htsim_lossless_warnings"] = max(r["lossless_warnings"] for r in peer)
        out["htsim_same_draw"] = len({r["digest"] for r in peer}) == 1
        out["htsim_fct_digest"] = peer[0]["digest"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--only", nargs="*", help="scenario names to run")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--jit", action="store_true", help="numba's JIT kernel even when an AOT build exists")
    ap.add_argument(
        "--htsim",
        metavar="BIN",
        help="htsim_roce binary: run htsim on perm128 / incast32 / perm1024 alternately",
    )
    a = ap.parse_args(argv)
    if a.jit:
        ENV["AIFABRIC_AOT"] = "0"
    kind = kernel_kind()
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.yaml"
        tiny.write_text(TINY)
        base = bench(tiny, a.repeat)["rss_mib"]  # the run-independent part of the peak RSS
    print(json.dumps({"kernel": kind, "base_rss_mib": base}), file=sys.stderr)
    rows = []
    names = a.only or PEER
    with tempfile.TemporaryDirectory() as tmp:
        shim = htsim_shim(Path(tmp)) if a.htsim else None
        for name in names:
            if name in PEER:
                peer = a.htsim if name in HTSIM else None
                r = bench(ROOT / "scenarios" / f"{name}.yaml", a.repeat, peer, shim)
                rows.append((name, r))
                print(json.dumps({"case": name, **r}), file=sys.stderr)
    if not a.no_scaling and not a.only:
        with tempfile.TemporaryDirectory() as tmp:
            for k in (8, 16, 24):
                f = Path(tmp) / f"k{k}.yaml"
                f.write_text(SCALING.format(k=k))
                r = bench(f, 1 if k == 24 else a.repeat)
                rows.append((f"fat-tree k={k} permutation ({k**3 // 4} hosts)", r))
                print(json.dumps({"case": f"k{k}", **r}), file=sys.stderr)
    if a.markdown:
        print(f"kernel: {kind}; peak RSS of a 2-flow run (interpreter, imports, kernel): {base:.0f} MiB\n")
        print(
            "| case | wall (s, median) | peak RSS (MiB) | RSS above 2-flow run (MiB) | guard estimate (MiB) | "
            "engine wall (s) | data packets | events | data pkts / wall-s | target | peer | load avg |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, r in rows:
            tgt = TARGETS.get(name)
            print(
                f"| {name} | {r['wall_s']:.2f} ({', '.join(map(str, r['runs_wall_s']))}) | {r['rss_mib']:.0f} | "
                f"{r['rss_mib'] - base:.0f} | {r['estimate_mib']:.1f} | "
                f"{r['engine_wall_s']:.2f} | {r['packets']:,} | {r['events']:,} | {r['pkts_per_wall_s']:,.0f} | "
                f"{'≤ ' + str(tgt) + ' s' if tgt else '—'} | {PEER_WALL.get(name, '—')} | "
                f"{r['load_avg_1min']:.2f} |"
            )
        paired = [(n, r) for n, r in rows if "htsim_wall_s" in r]
        if paired:
            print("\nPaired with htsim in the same run (runs alternating, medians):\n")
            print(
                "| case | ours wall (s) | htsim wall (s) | wall: ours / htsim | ours RSS | htsim RSS | "
                "RSS: ours / htsim | htsim flows finished | htsim: same draw every run | LOSSLESS warnings |"
            )
            print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
            for n, r in paired:
                print(
                    f"| {n} | {r['wall_s']:.2f} | {r['htsim_wall_s']:.2f} ({', '.join(map(str, r['htsim_runs_wall_s']))}) | "
                    f"{r['wall_s'] / r['htsim_wall_s']:.2f}× | {r['rss_mib']:.0f} MiB | {r['htsim_rss_mib']:.1f} MiB | "
                    f"{r['rss_mib'] / r['htsim_rss_mib']:.2f}× | {r['htsim_finished']:,} | "
                    f"{'yes' if r['htsim_same_draw'] else 'NO'} ({r['htsim_fct_digest']}) | "
                    f"{r['htsim_lossless_warnings']:,} |"
                )
    else:
        print(json.dumps(dict(rows), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

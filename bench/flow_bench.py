"""Flow-model benchmark: 16,384-GPU ring all-reduce, tree all-reduce and all-to-all estimates.

Run: ``.venv/bin/python bench/flow_bench.py [--gpus 16384] [--size 1GiB]``. Prints one line per
estimate (model time, busbw, wall) and the whole-process wall time and peak RSS. Results are
recorded in bench/FLOW_RESULTS.md.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

T0 = time.perf_counter()

from aifabric.topology import rail_optimized  # noqa: E402
from aifabric.units import parse_size  # noqa: E402
from aifabric.workload.collectives import run_collective  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=16384)
    ap.add_argument("--size", default="1GiB")
    ap.add_argument("--rate-gbps", type=int, default=400)
    args = ap.parse_args(argv)
    size = parse_size(args.size)
    t = time.perf_counter()
    topo = rail_optimized(args.gpus, args.rate_gbps * 10**9)
    print(f"topology {topo.name}: {topo.summary()['switches']} built in {time.perf_counter() - t:.2f} s")
    cases = [("all-reduce", "ring", "ecmp"), ("all-reduce", "ring", "adaptive"), ("all-reduce", "tree", "ecmp"),
             ("all-to-all", "ring", "ecmp")]
    for op, algo, routing in cases:
        for engine in ("analytic", "flow"):
            t = time.perf_counter()
            r = run_collective(op, size, topo, engine=engine, algorithm=algo, routing=routing)
            wall = time.perf_counter() - t
            print(f"{op:10s} {algo:4s} {routing:8s} {engine:8s} model={r.model:30s} proto={r.protocol:6s} "
                  f"time={r.time_s * 1e3:9.3f} ms busbw={r.busbw_gbps:7.1f} GB/s wall={wall:6.2f} s")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process wall {time.perf_counter() - T0:.2f} s, peak RSS {rss_mib:.0f} MiB, python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

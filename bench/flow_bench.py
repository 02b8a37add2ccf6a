"""Flow-model benchmark: 16,384-GPU ring all-reduce, tree all-reduce and all-to-all estimates, and
the flow engine on staggered-start (Poisson) workloads.

Run: ``.venv/bin/python bench/flow_bench.py [--gpus 16384] [--size 1GiB]`` (collectives), or
``.venv/bin/python bench/flow_bench.py --poisson 10000 --k 16 [--load 0.6]`` (Poisson arrivals of
web-search-CDF flow sizes between random host pairs of a k-ary fat-tree). Prints one line per
estimate (model time, busbw, wall) or per run, and the whole-process wall time and peak RSS.
Results are recorded in bench/FLOW_RESULTS.md.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

T0 = time.perf_counter()

import numpy as np  # noqa: E402

from aifabric.topology import fat_tree, rail_optimized  # noqa: E402
from aifabric.units import parse_size  # noqa: E402
from aifabric.workload.collectives import run_collective  # noqa: E402

# DCTCP web-search flow-size CDF (bytes, cumulative probability), sampled piecewise-linearly.
WEBSEARCH_CDF = [
    (6_000, 0.15),
    (13_000, 0.2),
    (19_000, 0.3),
    (33_000, 0.4),
    (53_000, 0.53),
    (133_000, 0.6),
    (667_000, 0.7),
    (1_333_000, 0.8),
    (3_333_000, 0.9),
    (6_667_000, 0.97),
    (20_000_000, 1.0),
]


def poisson_flows(hosts: np.ndarray, n: int, load: float, host_bps: float, seed: int = 1) -> dict:
    """``n`` flows with Poisson arrivals at ``load`` × the hosts' aggregate NIC rate, web-search
    sizes, uniformly random distinct (src, dst) host pairs."""
    rng = np.random.default_rng(seed)
    sz, p = (
        np.array([0] + [s for s, _ in WEBSEARCH_CDF], float),
        np.array([0] + [c for _, c in WEBSEARCH_CDF]),
    )
    size = np.maximum(np.interp(rng.random(n), p, sz), 64).astype(np.int64)
    lam = load * len(hosts) * host_bps / (size.mean() * 8)  # flows per second, whole fabric
    start_us = np.cumsum(rng.exponential(1 / lam, n)) * 1e6
    src = rng.choice(hosts, n)
    dst = rng.choice(hosts, n)
    clash = src == dst
    while clash.any():
        dst[clash] = rng.choice(hosts, int(clash.sum()))
        clash = src == dst
    return {"src": src, "dst": dst, "size_bytes": size, "start_us": start_us}


def bench_poisson(n: int, k: int, load: float, rate_gbps: int) -> None:
    from aifabric.flow import simulate_flows

    topo = fat_tree(k, rate_gbps * 10**9, 10**6)
    fl = poisson_flows(topo.hosts, n, load, rate_gbps * 1e9)
    t = time.perf_counter()
    df = simulate_flows(topo, fl, seed=1)
    wall = time.perf_counter() - t
    print(
        f"poisson fat-tree k={k} ({len(topo.hosts)} hosts) flows={n} load={load} events={df.attrs['events']} "
        f"fct_p50={df['fct_us'].median():.3f} us fct_p99={np.percentile(df['fct_us'], 99):.3f} us "
        f"slowdown_p99={np.percentile(df['slowdown'], 99):.4f} fct_sum={df['fct_us'].sum():.9e} wall={wall:.2f} s"
    )


def bench_collectives(gpus: int, size_text: str, rate_gbps: int) -> None:
    size = parse_size(size_text)
    t = time.perf_counter()
    topo = rail_optimized(gpus, rate_gbps * 10**9)
    print(f"topology {topo.name}: {topo.summary()['switches']} built in {time.perf_counter() - t:.2f} s")
    cases = [
        ("all-reduce", "ring", "ecmp"),
        ("all-reduce", "ring", "adaptive"),
        ("all-reduce", "tree", "ecmp"),
        ("all-to-all", "ring", "ecmp"),
    ]
    for op, algo, routing in cases:
        for engine in ("analytic", "flow"):
            t = time.perf_counter()
            r = run_collective(op, size, topo, engine=engine, algorithm=algo, routing=routing)
            wall = time.perf_counter() - t
            print(
                f"{op:10s} {algo:4s} {routing:8s} {engine:8s} model={r.model:30s} proto={r.protocol:6s} "
                f"time={r.time_s * 1e3:9.3f} ms busbw={r.busbw_gbps:7.1f} GB/s wall={wall:6.2f} s"
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=16384)
    ap.add_argument("--size", default="1GiB")
    ap.add_argument("--rate-gbps", type=int, default=400)
    ap.add_argument(
        "--poisson",
        type=int,
        default=0,
        metavar="FLOWS",
        help="run the flow engine on FLOWS Poisson-arrival flows instead of the collectives",
    )
    ap.add_argument("--k", type=int, default=8, help="fat-tree radix for --poisson")
    ap.add_argument(
        "--load", type=float, default=0.6, help="offered load for --poisson (fraction of NIC rate)"
    )
    args = ap.parse_args(argv)
    if args.poisson:
        bench_poisson(args.poisson, args.k, args.load, args.rate_gbps)
    else:
        bench_collectives(args.gpus, args.size, args.rate_gbps)
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"process wall {time.perf_counter() - T0:.2f} s, peak RSS {rss_mib:.0f} MiB, python {sys.version.split()[0]}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

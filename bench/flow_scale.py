"""Flow mode at internet scale (issue 19): one network step of a ring all-reduce, a tree all-reduce
and a rail-local all-to-all on a rail-optimised multi-plane fabric of up to 100,000 GPUs.

For each GPU count: the topology (``rail_optimized(gpus, 400 Gb/s, radix, planes)``), the flow
model's path model (switch-to-leaf distances, :mod:`aifabric.flow._bfs`), then
:func:`aifabric.workload.collectives.run_collective` with the flow engine for

* ring all-reduce — the per-rail ring step (one flow per GPU: routed, max-min, all flows);
* tree all-reduce — NCCL's double binary tree over the servers of each rail (routed, max-min);
* all-to-all — the per-rail all-pairs step (``gpus × (servers − 1)`` flows: 1.25 G at 100k GPUs)
  by symmetry reduction: flows between the same pair of leaves are interchangeable, so the step's
  bytes are aggregated per (source leaf, destination leaf) and spread evenly over the equal-cost
  next hops (:func:`aifabric.workload.collectives._group_even_loads`); the step time is the most
  loaded link's bytes over its rate (no flow is materialised).

Each line: model time of the collective, the network time of its steps, wall time of the estimate
and the process's peak RSS so far. ``--check N`` also runs the all-to-all at N GPUs flow by flow
(every flow routed, max-min) and prints the reduced / full ratio of the network time.

    PYTHONPATH=src python bench/flow_scale.py [--gpus 8192 32768 100000] [--radix 128] [--planes 2]
    PYTHONPATH=src python bench/flow_scale.py --gpus 2048 --radix 32 --planes 2 --check
"""

from __future__ import annotations

import argparse
import os
import resource
import time

T0 = time.perf_counter()

from aifabric.flow.engine import _path_model  # noqa: E402
from aifabric.topology import rail_optimized  # noqa: E402
from aifabric.workload.collectives import run_collective  # noqa: E402


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, nargs="+", default=[8192, 32768, 100000])
    ap.add_argument("--radix", type=int, default=128)
    ap.add_argument("--planes", type=int, default=2)
    ap.add_argument("--size", type=int, default=2**30, help="collective size in bytes (default 1 GiB)")
    ap.add_argument("--routing", default="adaptive")
    ap.add_argument("--check", action="store_true", help="also run the all-to-all flow by flow")
    ap.add_argument(
        "--all-to-all-max",
        type=int,
        default=8192,
        help="skip the all-to-all above this many GPUs (the even-split propagation's temporaries grow as "
        "switches x leaves x switch degree: 2.4 GiB at 32k, 21 GiB and 233 s at 100k GPUs)",
    )
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; import {time.perf_counter() - T0:.2f} s", flush=True)
    for n in a.gpus:
        t = time.perf_counter()
        topo = rail_optimized(n, 400 * 10**9, radix=a.radix, planes=a.planes)
        d = topo.meta["design"]
        t_topo = time.perf_counter() - t
        t = time.perf_counter()
        _path_model(topo)
        t_pm = time.perf_counter() - t
        print(
            f"{n} GPUs: {d.tiers} tiers x {d.planes} planes, {topo.num_nodes:,} nodes, {topo.num_links:,} links; "
            f"topology {t_topo:.2f} s, path model {t_pm:.2f} s, RSS {rss_mib():.0f} MiB",
            flush=True,
        )
        total = t_topo + t_pm
        cases = [("all-reduce", "ring"), ("all-reduce", "tree"), ("all-to-all", "ring")]
        for op, algo in cases:
            if op == "all-to-all" and n > a.all_to_all_max:
                print(f"  {op:10s} skipped above --all-to-all-max {a.all_to_all_max}", flush=True)
                continue
            t = time.perf_counter()
            r = run_collective(
                op, a.size, topo, engine="flow", algorithm=algo, routing=a.routing, protocol="simple"
            )
            dt = time.perf_counter() - t
            total += dt
            print(
                f"  {op:10s} {algo:4s} time {r.time_s * 1e3:9.3f} ms  network {r.network_time_s * 1e3:9.3f} ms  "
                f"[{r.model}]  wall {dt:.2f} s  RSS {rss_mib():.0f} MiB",
                flush=True,
            )
            if a.check and op == "all-to-all":
                t = time.perf_counter()
                full = run_collective(
                    op,
                    a.size,
                    topo,
                    engine="flow",
                    algorithm=algo,
                    routing=a.routing,
                    protocol="simple",
                    max_flows=10**12,
                )
                print(
                    f"  all-to-all flow by flow: network {full.network_time_s * 1e3:9.3f} ms [{full.model}]  "
                    f"wall {time.perf_counter() - t:.2f} s  RSS {rss_mib():.0f} MiB; reduced / full = "
                    f"{r.network_time_s / full.network_time_s:.4f}",
                    flush=True,
                )
        print(f"  {n} GPUs: topology + path model + the steps run {total:.2f} s", flush=True)
    print(f"whole process {time.perf_counter() - T0:.2f} s, peak RSS {rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

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
  next hops (:func:`aifabric.flow.symmetric.group_even_loads`: a numba kernel; one plane stands
  for identical planes); the step time is the most loaded link's bytes over its rate (no flow is
  materialised).

Each line: model time of the collective, the network time of its steps, wall time of the estimate,
the process's peak RSS so far and the load average; per size, wall and CPU seconds.

``--check`` (the 5 % agreement check): for each GPU count, each step timed both ways with the
NIC cap off (``nic_efficiency=1``, so the fabric, not the cap, is compared) — symmetry-reduced
(``max_flows=0``: the even-split link-load bound; the all-to-all by the kernel, one plane) and flow
by flow (every flow routed, max-min) under each ``--check-routing`` — and prints reduced / full.
The flow-by-flow all-to-all is skipped above ``--check-all-to-all-max`` GPUs (8.4 M flows at
8,192 GPUs; per-packet splitting expands every flow over all its equal-cost paths).

    PYTHONPATH=src python bench/flow_scale.py [--gpus 8192 32768 100000] [--radix 128] [--planes 2]
    PYTHONPATH=src python bench/flow_scale.py --check --gpus 1024 8192 [--check-routing adaptive-packet flowlet]
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
    ap.add_argument(
        "--size",
        type=int,
        default=None,
        help="collective size in bytes (default 1 GiB; with --check 64 GiB, so that a flow's first packet, "
        "which the flow-by-flow run counts as latency, is < 1 %% of it)",
    )
    ap.add_argument("--routing", default="adaptive")
    ap.add_argument("--check", action="store_true", help="the 5 %% agreement check instead of the timings")
    ap.add_argument(
        "--check-routing", nargs="+", default=["adaptive-packet", "flowlet"], help="routings of --check"
    )
    ap.add_argument(
        "--check-all-to-all-max",
        type=int,
        default=2048,
        help="--check: skip the flow-by-flow all-to-all above this many GPUs (memory)",
    )
    ap.add_argument(
        "--all-to-all-max",
        type=int,
        default=10**7,
        help="skip the all-to-all above this many GPUs",
    )
    a = ap.parse_args()
    if a.size is None:
        a.size = 64 * 2**30 if a.check else 2**30
    print(f"load average {os.getloadavg()[0]:.2f}; import {time.perf_counter() - T0:.2f} s", flush=True)
    if a.check:
        check(a)
    else:
        timings(a)
    print(f"whole process {time.perf_counter() - T0:.2f} s, peak RSS {rss_mib():.0f} MiB")


def timings(a) -> None:
    for n in a.gpus:
        t, c0 = time.perf_counter(), time.process_time()
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
        for op, algo in CASES:
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
                f"[{r.model}]  wall {dt:.2f} s  RSS {rss_mib():.0f} MiB  load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        cpu = time.process_time() - c0
        print(
            f"  {n} GPUs: topology + path model + the steps run {total:.2f} s wall, {cpu:.2f} s CPU "
            f"(load {os.getloadavg()[0]:.2f})",
            flush=True,
        )


def check(a) -> None:
    worst = 0.0
    for n in a.gpus:
        topo = rail_optimized(n, 400 * 10**9, radix=a.radix, planes=a.planes)
        d = topo.meta["design"]
        print(f"{n} GPUs: {d.tiers} tiers x {d.planes} planes (NIC cap off: nic_efficiency=1)", flush=True)
        for routing in a.check_routing:
            for op, algo in CASES:
                kw = dict(
                    engine="flow", algorithm=algo, routing=routing, protocol="simple", nic_efficiency=1.0
                )
                t = time.perf_counter()
                red = run_collective(op, a.size, topo, max_flows=0, **kw)
                t_red = time.perf_counter() - t
                head = f"  {routing:15s} {op:10s} {algo:4s} reduced {red.network_time_s * 1e3:9.4f} ms ({t_red:.2f} s)"
                if op == "all-to-all" and n > a.check_all_to_all_max:
                    print(f"{head}; flow by flow skipped above --check-all-to-all-max", flush=True)
                    continue
                t = time.perf_counter()
                full = run_collective(op, a.size, topo, max_flows=10**12, **kw)
                t_full = time.perf_counter() - t
                ratio = red.network_time_s / full.network_time_s
                worst = max(worst, abs(ratio - 1))
                print(
                    f"{head}; flow by flow {full.network_time_s * 1e3:9.4f} ms [{full.model}] ({t_full:.2f} s); "
                    f"reduced / full {ratio:.4f}; RSS {rss_mib():.0f} MiB; load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    print(f"largest |reduced / full - 1|: {worst:.4f}")


CASES = [("all-reduce", "ring"), ("all-reduce", "tree"), ("all-to-all", "ring")]

if __name__ == "__main__":
    main()

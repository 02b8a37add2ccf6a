"""Placement and flow entropy: what ECMP costs a job that does not hold the fabric in order (issue 12).

    .venv/bin/python bench/placement.py [GPUS]

The built-in compare job (Llama-3.1 70B on GPUS H100, default 1,024), its design stage's fabrics and
the measure stage's flow model, over placement seeds 1–3: ring-step and same-rail-permutation
efficiency per placement and routing, then RoCE/ECMP on a fragmented placement per QPs per
connection. Prints two Markdown tables (the README's).
"""

from __future__ import annotations

import sys

import numpy as np

SEEDS = (1, 2, 3)
QPS = (1, 2, 4, 8)


def measured(gpus: int, placement: str, roce_routing: str, seed: int, qps: int = 1) -> dict:
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.design.fabrics import DesignInput, default_options, design
    from aifabric.stages.measure.network import measure_fabric
    from aifabric.stages.pipeline import workload_input
    from aifabric.stages.workload import workload

    cat = load_catalog(None)
    adv = AdvisorSpec(gpus=gpus, placement=placement, roce_routing=roce_routing, qps_per_connection=qps)
    gpu = cat.get("gpu", adv.gpu)
    opts = default_options(gpu, roce_routing)
    des = design(DesignInput(adv.gpus, adv.gpu, opts, cat))
    wl = workload(workload_input(adv, gpu, opts[0].nic_rate_gbps, seed))
    out = {}
    for fd in des.fabrics:
        n = measure_fabric(fd, wl, gpu, seed, sweep=False)
        out[(fd.technology, n.routing)] = (n.ring_step_efficiency, n.permutation_efficiency)
    return out


def _cell(values: list[float]) -> str:
    return f"{np.mean(values):.3f} ({' / '.join(f'{v:.3f}' for v in values)})"


def main(gpus: int = 1024) -> None:
    cols = [("infiniband", "adaptive-packet"), ("roce", "ecmp"), ("roce", "adaptive-packet")]
    print(f"{gpus} H100, seeds {', '.join(map(str, SEEDS))}: ring-step efficiency (permutation efficiency)\n")
    print("| placement | " + " | ".join(f"{t} {r}" for t, r in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for placement in ("ideal", "fragmented", "shared"):
        runs = {
            s: {**measured(gpus, placement, "ecmp", s), **measured(gpus, placement, "adaptive-packet", s)}
            for s in SEEDS
        }
        cells = []
        for c in cols:
            ring = [runs[s][c][0] for s in SEEDS]
            perm = [runs[s][c][1] for s in SEEDS]
            cells.append(f"{_cell(ring)}; perm {np.mean(perm):.3f}")
        print(f"| {placement} | " + " | ".join(cells) + " |")
    print("\nRoCE ECMP, fragmented placement, per QPs per connection (2 channels per NIC)\n")
    print("| QPs per connection | ring-step efficiency | permutation efficiency |")
    print("|---|---|---|")
    for q in QPS:
        r = [measured(gpus, "fragmented", "ecmp", s, q)[("roce", "ecmp")] for s in SEEDS]
        print(f"| {q} | {_cell([x[0] for x in r])} | {_cell([x[1] for x in r])} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1024)

"""Collective completion time: flow-level model vs packet engine (issue 4's agreement check).

    .venv/bin/python bench/collective_agreement.py

128 hosts (k=8 fat-tree, 100 Gb/s, one rank per host) and 256 GPUs (32 nodes × 8, rail-optimised,
400 Gb/s). Prints a Markdown table (see aifabric.workload.agreement for what is compared).
"""

from __future__ import annotations

import sys
import time

CASES_128 = [
    ("all-reduce", "ring", 64 * 2**20),
    ("all-reduce", "tree", 16 * 2**20),
    ("all-gather", "ring", 64 * 2**20),
    ("reduce-scatter", "ring", 64 * 2**20),
    ("all-to-all", "ring", 16 * 2**20),
]
CASES_256 = [("all-reduce", "ring", 256 * 2**20), ("all-to-all", "ring", 64 * 2**20)]
FABRICS = [("roce", "ecmp"), ("infiniband", "static"), ("roce", "adaptive")]


def cases():
    from aifabric.topology import fat_tree, rail_optimized

    ft = fat_tree(8, 100 * 10**9, 10**6)
    rail = rail_optimized(256, 400 * 10**9)
    for op, alg, size in CASES_128:
        for tech, routing in FABRICS:
            yield dict(
                op=op,
                size_bytes=size,
                topology=ft,
                technology=tech,
                routing=routing,
                algorithm=alg,
                gpus_per_node=1,
            )
    for op, alg, size in CASES_256:
        for tech, routing in FABRICS:
            yield dict(op=op, size_bytes=size, topology=rail, technology=tech, routing=routing, algorithm=alg)


def main() -> int:
    from aifabric.workload.agreement import agreement_table, format_table

    t0 = time.perf_counter()
    df = agreement_table(list(cases()))
    print(format_table(df))
    print(
        f"\n{len(df)} cases in {time.perf_counter() - t0:.1f} s; packet engine {df.packet_wall_s.sum():.1f} s, "
        f"flow model {df.flow_wall_s.sum():.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

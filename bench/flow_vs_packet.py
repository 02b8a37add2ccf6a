"""Flow-level model vs packet engine on the same flows (same topology, routing and hashing).

    .venv/bin/python bench/flow_vs_packet.py

Prints a Markdown table: per scenario the packet engine's and the flow model's FCT p50 / p99 /
max, their relative gap and both wall times. Collective completion time (issue 4's 128–256-host
check) needs step scheduling in the packet engine's control plane and is not in this table yet.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ["incast32.yaml", "incast32-ib.yaml", "perm128.yaml", "perm128-dcqcn.yaml"]


def main() -> int:
    from aifabric.flow.scenario import simulate_flow_scenario
    from aifabric.scenario import load_scenario
    from aifabric.sim import simulate
    from aifabric.topology import from_spec
    from aifabric.workload.traffic import flows_for

    print(
        "| scenario | packet p50 / p99 / max (µs) | flow p50 / p99 / max (µs) | gap at max | packet wall | flow wall |"
    )
    print("|---|---|---|---:|---:|---:|")
    for name in SCENARIOS:
        sc = load_scenario(ROOT / "scenarios" / name)
        topo = from_spec(sc.topology)
        flows = flows_for(sc, topo)
        t0 = time.perf_counter()
        p = simulate(sc, flows=flows, topology=topo).summary
        tp = time.perf_counter() - t0
        t0 = time.perf_counter()
        q = simulate_flow_scenario(sc, flows=flows, topology=topo)["summary"]
        tq = time.perf_counter() - t0
        gap = q["fct_max_us"] / p["fct_max_us"] - 1
        print(
            f"| {name} | {p['fct_p50_us']:.1f} / {p['fct_p99_us']:.1f} / {p['fct_max_us']:.1f} | "
            f"{q['fct_p50_us']:.1f} / {q['fct_p99_us']:.1f} / {q['fct_max_us']:.1f} | {gap:+.1%} | "
            f"{tp:.2f} s | {tq:.2f} s |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

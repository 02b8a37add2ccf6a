"""The README's like-for-like table (issue 25): nine jobs through ``compare``, each row with the
recommendation, the verdict, P(best), what it hinges on and a sentence of why, generated from the
run's own numbers (so the table cannot drift from what the code says).

    PYTHONPATH=src python scripts/like_for_like_table.py [--only NAME,...] > table.md
"""

from __future__ import annotations

import sys
import time

from aifabric.api import compare_advisor
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec

WIDE_EP = {"model": "deepseek-v3", "precision": "fp8", "batch": 256, "gpus_per_instance": 16}
JOBS = {
    "default (1,024 H100, Llama 3.1 70B)": ({}, {}),
    "64 H100, Llama 3.1 70B": ({"gpus": 64}, {}),
    "2,048 H100, Llama 3.1 405B": ({"gpus": 2048, "model": "llama3.1-405b"}, {}),
    "2,048 H100, DeepSeek-V3": ({"gpus": 2048, "model": "deepseek-v3"}, {}),
    "4,096 B200, Llama 3.1 70B": ({"gpus": 4096, "gpu": "b200"}, {}),
    "16,384 H100, Llama 3.1 405B": ({"gpus": 16384, "model": "llama3.1-405b"}, {}),
    "2,304 GB200 NVL72, Llama 3.1 405B": ({"gpus": 2304, "gpu": "gb200-nvl72", "model": "llama3.1-405b"}, {}),
    "128 H100 inference, DeepSeek-V3 wide EP": (
        {"gpus": 128, "workload": "inference"},
        {"inference": WIDE_EP},
    ),
    "128 H100 storage (checkpoints)": ({"gpus": 128, "workload": "storage"}, {}),
}


def _fmt(v) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def why(r: dict) -> str:
    """One sentence from the run's numbers: capex, step time, expected loss, what flips it."""
    rec = r["recommendation"]
    if rec["fabric"] == "none":
        return rec["summary"]
    ib = next((x for x in r["fabrics"] if x["technology"] == "infiniband"), None)
    ro = next((x for x in r["fabrics"] if x["technology"] == "roce"), None)
    parts = []
    if ib and ro:
        parts.append(f"RoCE capex is {ro['capex_usd'] / ib['capex_usd']:.0%} of IB's")
        if ib.get("iteration_time_s") and ro.get("iteration_time_s"):
            parts.append(f"its step {ro['iteration_time_s'] / ib['iteration_time_s'] - 1:+.1%}")
        parts.append(f"expected loss IB {ib['expected_loss']:.2%} / RoCE {ro['expected_loss']:.2%}")
    cats = [s for s in r["sensitivity"] if s.get("kind") == "categorical" and s.get("verdict_changes")]
    if cats:
        parts.append(
            "under "
            + ", ".join(
                f"{s['input']} = {s['range'][1]} it is {s['design_then']} ({s['verdict_then']})" for s in cats
            )
        )
    return "; ".join(parts)


def row(name: str, adv: dict, extra: dict, cat) -> str:
    t0 = time.perf_counter()
    r = compare_advisor(AdvisorSpec(**adv), cat, **extra)
    rec = r["recommendation"]
    p = r["probability_best"].get(rec["design"], 1.0)
    hinges = "; ".join(
        f"{h['assumption']} {_fmt(h['value_now'])} → {_fmt(h['flips_at'])}: {h.get('design_then') or h.get('recommendation_then')}"
        + (" (outside range)" if h.get("outside_range") else "")
        for h in rec["hinges_on"]
    )
    print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return f"| {name} | {rec['design']} | {rec['verdict']} | {p:.0%} | {hinges or '—'} | {why(r)} |"


def main() -> None:
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    cat = load_catalog(None)
    print("| job | recommendation | verdict | P(best) | hinges on | why |")
    print("|---|---|---|---|---|---|")
    for name, (adv, extra) in JOBS.items():
        if only and not any(o in name for o in only):
            continue
        print(row(name, adv, extra, cat), flush=True)


if __name__ == "__main__":
    main()

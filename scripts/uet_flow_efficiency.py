"""Measure the flow model's UET efficiency term on the packet engine and write
src/aifabric/data/reference/uet-flow-efficiency.json.

The term: under per-packet spraying the fabric (switch-to-switch) links of a lossy UET fabric do
not carry line rate — transient collisions of sprayed packets trim (or drop) packets and NSCC
backs off, leaving the receiver's link idle for a while. It is measured on the packet engine on
*calibration* permutations that are not the shipped scenarios (k=8 fat tree, 128 hosts, random
derangements with seeds 11-13, 1 MB flows): per flow, its drain time alone on the fabric divided
by its drain time in the run (the FCT minus the path's fixed latency), averaged over flows and
seeds. One value with trimming, one without. Run: PYTHONPATH=src python scripts/uet_flow_efficiency.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aifabric.flow.uet import CALIBRATION
from aifabric.stages.uet_validation import measure_efficiency

OUT = Path(__file__).resolve().parents[1] / "src/aifabric/data/reference/uet-flow-efficiency.json"


def main() -> int:
    doc = {"calibration": CALIBRATION, "efficiency": {}}
    for trimming in (True, False):
        eta, per_seed = measure_efficiency(trimming)
        doc["efficiency"]["trimming" if trimming else "no_trimming"] = {
            "value": round(eta, 4),
            "per_seed": [round(x, 4) for x in per_seed],
        }
        print(f"trimming={trimming}: eta={eta:.4f} per seed {per_seed}", file=sys.stderr)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Measure the flow model's UET efficiency term on the packet engine and write
src/aifabric/data/reference/uet-flow-efficiency.json.

The term: under per-packet spraying the fabric (switch-to-switch) links of a lossy UET fabric do
not carry line rate — transient collisions of sprayed packets trim (or drop) packets and NSCC
backs off, leaving the receiver's link idle for a while. It is measured on the packet engine on
*calibration* permutations that are not the shipped scenarios (k=8 fat tree, 128 hosts, random
derangements with seeds 11-13, 1 MB flows): per flow, its drain time alone on the fabric divided
by its FCT in the run (the packet engine's ideal FCT / FCT); the mean and the quantiles of all
flows. One value with trimming, one without. Run: PYTHONPATH=src python scripts/uet_flow_efficiency.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aifabric.flow.uet import CALIBRATION
from aifabric.stages.validate.uet import measure_efficiency

OUT = Path(__file__).resolve().parents[1] / "src/aifabric/data/reference/uet-flow-efficiency.json"


def main() -> int:
    doc = {"calibration": CALIBRATION, "efficiency": {}}
    for trimming in (True, False):
        e = measure_efficiency(trimming)
        doc["efficiency"]["trimming" if trimming else "no_trimming"] = e
        print(f"trimming={trimming}: mean {e['mean']} per seed {e['per_seed']}", file=sys.stderr)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

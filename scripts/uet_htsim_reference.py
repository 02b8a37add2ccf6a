"""Record the UEC htsim's FCTs on the UET scenarios as reference data (never its code).

Build htsim outside this repository (github.com/ultraethernet/uet-htsim; ``cmake -S htsim/sim -B
build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target htsim_uec``), then:

    PYTHONPATH=src python scripts/uet_htsim_reference.py /path/to/htsim_uec COMMIT

It writes ``src/aifabric/data/reference/uet-htsim.json``: per scenario and htsim load balancer,
the command line, every flow's FCT (µs; all flows start at 0) with p50 / p99 / max, htsim's
packet counters and the parameters it printed. The all-to-all runs on a connection matrix written
from ``scenarios/alltoall16-uet.yaml``'s flows (host index order).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src/aifabric/data/reference/uet-htsim.json"
COMMON = ["-linkspeed", "100000", "-mtu", "4064", "-hop_latency", "1", "-end", "100000", "-seed", "1"]
# scenario -> (connection matrix, htsim nodes); the fat tree is htsim's own (3 tiers)
CASES = {
    "scenarios/incast32-uet.yaml": ("scenarios/peer/incast32to1_128_2MB.cm", 128),
    "scenarios/perm128-uet.yaml": ("scenarios/peer/perm128_2MB.cm", 128),
    "scenarios/alltoall16-uet.yaml": (None, 16),
}
VARIANTS = {  # name -> extra htsim arguments
    "trimming, mixed load balancing (htsim default)": [],
    "trimming, oblivious spraying": ["-load_balancing_algo", "oblivious"],
    "no trimming, oblivious spraying": ["-load_balancing_algo", "oblivious", "-disable_trim"],
    "no trimming, mixed load balancing (htsim default)": ["-disable_trim"],
    "trimming, bitmap load balancing": ["-load_balancing_algo", "bitmap"],
    "trimming, reps_legacy load balancing": ["-load_balancing_algo", "reps_legacy"],
    "trimming, mixed load balancing (htsim default), rccc": ["-receiver_cc_only"],
    "trimming, mixed load balancing (htsim default), nscc-rccc": ["-receiver_cc"],
}


def a2a_matrix(path: Path) -> None:
    from aifabric.cli._preflight import prepare

    prep = prepare(ROOT / "scenarios/alltoall16-uet.yaml", None, None, False, json_flows=False)
    idx = {int(h): i for i, h in enumerate(prep.topology.hosts)}
    f = prep.flows
    rows = zip(np.asarray(f["src"]), np.asarray(f["dst"]), np.asarray(f["size_bytes"]), strict=True)
    lines = [f"Nodes {len(idx)}", f"Connections {len(f)}"]
    lines += [
        f"{idx[int(s)]}->{idx[int(d)]} id {k + 1} start 0 size {int(z)}" for k, (s, d, z) in enumerate(rows)
    ]
    path.write_text("\n".join(lines) + "\n")


def parse(text: str) -> dict:
    fct = np.array([float(x) for x in re.findall(r"finished at ([0-9.]+)", text)])
    last = text.strip().splitlines()[-1]
    counters = {k.lower(): int(v) for k, v in re.findall(r"(\w+): (\d+)", last)}
    params = {
        "queue_bytes": int(re.search(r"Tier 0 QueueSize Down (\d+)", text).group(1)),
        "base_rtt_us": float(re.search(r"network_max_unloaded_rtt ([0-9.]+)", text).group(1)),
        "ecn_low_bytes": int(re.search(r"ecn_low=(\d+)", text).group(1)),
        "ecn_high_bytes": int(re.search(r"ecn_high=(\d+)", text).group(1)),
    }
    return {
        "flows": len(fct),
        "fct_p50_us": round(float(np.percentile(fct, 50)), 3),
        "fct_p99_us": round(float(np.percentile(fct, 99)), 3),
        "fct_max_us": round(float(fct.max()), 3),
        "fct_us": [round(float(x), 3) for x in fct],
        "counters": counters,
        "parameters": params,
    }


def main(binary: str, commit: str) -> None:
    cxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    build = f"cmake -DCMAKE_BUILD_TYPE=Release (htsim's -O3 -g), {cxx}, target htsim_uec"
    out = {"source": "github.com/ultraethernet/uet-htsim", "commit": commit, "build": build, "scenarios": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for scen, (cm, nodes) in CASES.items():
            if cm is None:
                cm = str(Path(tmp) / "alltoall16.cm")
                a2a_matrix(Path(cm))
            runs = {}
            for name, extra in VARIANTS.items():
                args = ["-tm", str(ROOT / cm) if not Path(cm).is_absolute() else cm, "-nodes", str(nodes)]
                args += ["-tiers", "3", *COMMON, *extra]
                text = subprocess.run(
                    [binary, *args], capture_output=True, text=True, check=True, cwd=tmp
                ).stdout
                runs[name] = {
                    "command": "htsim_uec " + " ".join(args).replace(str(ROOT) + "/", ""),
                    **parse(text),
                }
                print(scen, name, runs[name]["fct_p50_us"], runs[name]["fct_p99_us"], flush=True)
            out["scenarios"][scen] = runs
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

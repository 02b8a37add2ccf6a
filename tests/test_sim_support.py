"""Small scenarios for the packet-engine tests (built in code, not files); holds no tests."""

from __future__ import annotations

from aifabric.scenario import scenario_from_dict

PKT = 4064  # 4000 B payload + 64 B header
# a 4 × 4 × 4 leaf-spine at 100G and a permutation on it (routing-mode tests)
LS = {
    "kind": "leaf-spine",
    "leaves": 4,
    "spines": 4,
    "hosts_per_leaf": 4,
    "link_rate": "100Gbps",
    "link_delay": "1us",
}
PERM = {"kind": "permutation", "flow_size": "400KB"}
SER_100G_PS = PKT * 8 * 10**12 // (100 * 10**9)  # 325,120 ps
ACK_100G_PS = 64 * 8 * 10**12 // (100 * 10**9)


def scenario(
    topology: dict, workload: dict, fabric: dict | None = None, until: str = "100ms", seed: int = 1, **sim
):
    fab = {
        "technology": "roce",
        "mtu": "4000B",
        "header": "64B",
        "switch_latency": "0ns",
        "switch_buffer": "32MiB",
        "pfc": {"enabled": True, "mode": "static", "xoff": "60960B", "xon": "48768B"},
        "ecn": {"enabled": False},
        "congestion_control": "none",
        "routing": "ecmp",
    }
    if fabric:
        for k, v in fabric.items():
            fab[k] = v
    if fab.get("technology") == "infiniband":
        fab.pop("pfc", None)
        fab.pop("ecn", None)
        fab.setdefault("routing", "static")
    return scenario_from_dict(
        {
            "name": "test",
            "seed": seed,
            "topology": topology,
            "fabric": fab,
            "workload": workload,
            "sim": {"until": until, **sim},
        }
    )


def star(hosts: int = 4, rate: str = "100Gbps", delay: str = "1us") -> dict:
    return {"kind": "star", "hosts": hosts, "link_rate": rate, "link_delay": delay}


def fat_tree(k: int = 4, rate: str = "100Gbps", delay: str = "1us") -> dict:
    return {"kind": "fat-tree", "k": k, "link_rate": rate, "link_delay": delay}


def run_python(args: list[str], disable_jit: bool, timeout: int = 300) -> str:
    """``python ARGS`` in a fresh interpreter from the repository root, numba's JIT on or off
    (``NUMBA_DISABLE_JIT=1`` runs the kernels as plain Python); returns stdout, fails on exit ≠ 0."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    if disable_jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    p = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def run_parity_snippet(code: str, disable_jit: bool) -> dict:
    """Run a parity snippet (``{tests}`` replaced by this folder, so it can import these helpers)
    and parse the JSON it prints."""
    import json
    from pathlib import Path

    return json.loads(
        run_python(["-c", code.format(tests=str(Path(__file__).resolve().parent))], disable_jit)
    )

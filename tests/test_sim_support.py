"""Small scenarios for the packet-engine tests (built in code, not files); holds no tests."""

from __future__ import annotations

from aifabric.scenario import scenario_from_dict

PKT = 4064  # 4000 B payload + 64 B header
SER_100G_PS = PKT * 8 * 10**12 // (100 * 10**9)  # 325,120 ps
ACK_100G_PS = 64 * 8 * 10**12 // (100 * 10**9)


def scenario(topology: dict, workload: dict, fabric: dict | None = None, until: str = "100ms", seed: int = 1,
             **sim):
    fab = {"technology": "roce", "mtu": "4000B", "header": "64B", "switch_latency": "0ns",
           "switch_buffer": "32MiB", "pfc": {"enabled": True, "mode": "static", "xoff": "60960B", "xon": "48768B"},
           "ecn": {"enabled": False}, "congestion_control": "none", "routing": "ecmp"}
    if fabric:
        for k, v in fabric.items():
            fab[k] = v
    if fab.get("technology") == "infiniband":
        fab.pop("pfc", None)
        fab.pop("ecn", None)
        fab.setdefault("routing", "static")
    return scenario_from_dict({"name": "test", "seed": seed, "topology": topology, "fabric": fab,
                               "workload": workload, "sim": {"until": until, **sim}})


def star(hosts: int = 4, rate: str = "100Gbps", delay: str = "1us") -> dict:
    return {"kind": "star", "hosts": hosts, "link_rate": rate, "link_delay": delay}


def fat_tree(k: int = 4, rate: str = "100Gbps", delay: str = "1us") -> dict:
    return {"kind": "fat-tree", "k": k, "link_rate": rate, "link_delay": delay}

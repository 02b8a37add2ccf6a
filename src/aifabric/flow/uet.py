"""Ultra Ethernet (``fabric.transport: uet``) in the flow model.

* **Spraying** = the even split over the equal-cost paths that the flow model already uses for
  ``adaptive-packet`` (:meth:`aifabric.flow.paths.PathModel.split`: at every hop a flow's bytes
  divide evenly over the equal-cost next hops) — the fluid limit of a sender spraying its packets
  over many entropy values. ``uet.ev_count: 1`` keeps a flow on its one ECMP path.
* **Trimming and retransmission** = one efficiency term ``eta`` on the fabric (switch-to-switch)
  links: the share of line rate they carry under sprayed lossy traffic, measured on the packet
  engine (:mod:`aifabric.stages.uet_validation`, ``scripts/uet_flow_efficiency.py``) on
  calibration permutations that are not the shipped scenarios, one value with trimming and one
  without, recorded in ``data/reference/uet-flow-efficiency.json``. Host links keep line rate: a
  receiver's queue trims the packets it cannot take while its link stays busy.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from aifabric.topology.core import Topology

EFFICIENCY_FILE = Path(__file__).resolve().parents[1] / "data/reference/uet-flow-efficiency.json"
# the packet-engine runs the efficiency term is measured on (never the shipped scenarios)
CALIBRATION = {
    "topology": {"kind": "fat-tree", "k": 8, "link_rate": "100Gbps", "link_delay": "1us"},
    "workload": {"kind": "permutation", "flow_size": "1MB"},
    "seeds": [11, 12, 13],
    "fabric": {"mtu": "4000B", "header": "64B", "switch_buffer": "32MiB", "ev_count": 64},
    "metric": "mean over flows of ideal_fct / fct (the packet engine's own ideal)",
}


@cache
def efficiency_table() -> dict:
    return json.loads(EFFICIENCY_FILE.read_text())


def efficiency(trimming: bool) -> float:
    """``eta``: the share of line rate a fabric link carries under UET spraying (measured)."""
    return float(efficiency_table()["efficiency"]["trimming" if trimming else "no_trimming"]["value"])


def routing(fabric) -> str:
    """The flow model's routing mode for a UET fabric: the even split when packets are sprayed."""
    return "adaptive-packet" if fabric.uet.ev_count > 1 else "ecmp"


def fabric_link_scale(topology: Topology, eta: float) -> np.ndarray:
    """Per directed link (``2*link + dir``): ``eta`` on switch-to-switch links, 1 on host links."""
    is_host = np.zeros(topology.num_nodes, bool)
    is_host[topology.hosts] = True
    host_link = is_host[topology.link_a] | is_host[topology.link_b]
    return np.repeat(np.where(host_link, 1.0, eta), 2)

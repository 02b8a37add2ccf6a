"""Ultra Ethernet (``fabric.transport: uet``) in the flow model.

* **Spraying** = the even split over the equal-cost paths that the flow model already uses for
  ``adaptive-packet`` (:meth:`aifabric.flow.paths.PathModel.split`: at every hop a flow's bytes
  divide evenly over the equal-cost next hops) — the fluid limit of a sender spraying its packets
  over many entropy values. ``uet.ev_count: 1`` keeps a flow on its one ECMP path.
* **Trimming and retransmission** = a per-flow efficiency: a sprayed flow that crosses a
  switch-to-switch link runs at most at ``eta`` of its bottleneck rate, where the flows' ``eta``
  follow the distribution measured on the packet engine (mean over flows of ideal FCT / FCT on
  calibration permutations that are none of the validated cases: :data:`CALIBRATION`,
  :mod:`aifabric.stages.validate.uet`, ``scripts/uet_flow_efficiency.py``; one distribution with
  trimming, one without; ``data/reference/uet-flow-efficiency.json``). Flows are given its
  quantiles evenly, in a seeded order. Where flows share a link (an incast's receiver, an
  all-to-all's hosts) the cap does not bind: the shared link's queue trims what it cannot take
  while the link stays busy.
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


QUANTILES = 101  # recorded quantiles of the per-flow efficiency (0 %, 1 %, ..., 100 %)


@cache
def efficiency_table() -> dict:
    return json.loads(EFFICIENCY_FILE.read_text())


def _entry(trimming: bool) -> dict:
    return efficiency_table()["efficiency"]["trimming" if trimming else "no_trimming"]


def efficiency(trimming: bool) -> float:
    """The mean per-flow efficiency measured on the calibration permutations."""
    return float(_entry(trimming)["mean"])


def flow_efficiencies(n: int, trimming: bool, seed: int) -> np.ndarray:
    """``n`` flows' efficiencies: the measured distribution's quantiles at (i + 0.5) / n, in an
    order drawn from ``seed``."""
    q = np.asarray(_entry(trimming)["quantiles"], dtype=np.float64)
    levels = (np.arange(n) + 0.5) / n
    eff = np.interp(levels, np.linspace(0.0, 1.0, len(q)), q)
    return eff[np.random.default_rng(seed).permutation(n)]


def routing(fabric) -> str:
    """The flow model's routing mode for a UET fabric: the even split when packets are sprayed."""
    return "adaptive-packet" if fabric.uet.ev_count > 1 else "ecmp"


def fabric_links(topology: Topology) -> np.ndarray:
    """Per directed link (``2*link + dir``): True on switch-to-switch links."""
    is_host = np.zeros(topology.num_nodes, bool)
    is_host[topology.hosts] = True
    return np.repeat(~(is_host[topology.link_a] | is_host[topology.link_b]), 2)


def flow_caps_bps(topology: Topology, paths, split, bottleneck_bps, eff) -> np.ndarray:
    """Each flow's rate cap: ``eff`` × its bottleneck rate if it crosses a switch-to-switch link
    (its split's links, or its path without a split), else none (``inf``)."""
    fab = fabric_links(topology)
    if split is not None:
        fptr, flink = split[0], split[1]
        fid = np.repeat(np.arange(len(fptr) - 1), np.diff(fptr))
        uses = np.bincount(fid, weights=fab[flink], minlength=len(fptr) - 1) > 0
    else:
        uses = ((paths >= 0) & fab[np.maximum(paths, 0)]).any(axis=1)
    return np.where(uses, np.asarray(eff) * bottleneck_bps, np.inf)

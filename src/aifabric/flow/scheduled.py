"""The scheduled fabric's cell tax (routing mode ``scheduled``: Broadcom Jericho3-AI leaves with
Ramon3 fabric elements, the OCP DDC class; README "Routing modes"), shared by the packet engine and
the flow model so that both charge the same.

Inside a scheduled fabric a packet crosses the fabric links (leaf ↔ spine, NCP ↔ NCF) as cells,
each with a cell header, and the fabric links may run faster than the Ethernet ports they serve
(fabric *speedup*). The effective rate of a fabric link for packet bytes is therefore::

    link rate × speedup / (1 + header / payload)

The host-facing (Ethernet) ports are not cells and keep their rate.

Sources and assumptions:

* **Cell payload and header: no public source.** DNX cell formats are under NDA; the public
  Jericho3-AI material ([S42], [S43], [S44] in /work/shared/reference/hardware-facts.md §A.5) says
  "cell-based scheduled fabric" without sizes. Assumed: 256-byte cell payload with a 16-byte cell
  header (6.25 % overhead); a plausible range is 8–32 B on 256 B, 3–12 %.
* **Speedup: the value that offsets the cell tax (1 + 16/256 = 1.0625) — an assumption.**
  A scheduled fabric is built non-blocking: Broadcom presents the Jericho3-AI fabric as
  "congestion-free" with "perfect load balancing" (Henry Wu, Broadcom CSD, Jericho3-AI fabric talk,
  podwise.ai/dashboard/episodes/2189095), which needs fabric goodput ≥ port rate. The figure is
  unpublished; hardware-facts §A.5 [S42] gives only the SerDes totals (28.8 Tb/s, 14.4 Tb/s of it
  front panel). With speedup 1.0 (no more fabric than port bandwidth) a fabric link carries 0.941
  of its rate in packet bytes and a permutation that loads every fabric link reaches at most that
  (tests/test_scheduled_fabric.py runs both).

With the defaults the fabric links carry their full nominal rate in packet bytes (factor 1.0).
"""

from __future__ import annotations

import numpy as np

from aifabric.topology.core import HOST_TIER

CELL_PAYLOAD_BYTES = 256  # assumption (no public DNX cell size): see the module docstring
CELL_HEADER_BYTES = 16  # assumption, range 8–32 B
# fabric-side / port-side bandwidth: assumed just enough to offset the cell tax (no public figure)
FABRIC_SPEEDUP = 1.0 + CELL_HEADER_BYTES / CELL_PAYLOAD_BYTES


def fabric_rate_factor(cell_payload=None, cell_header=None, speedup=None) -> float:
    """Packet bytes a fabric link carries per byte of its nominal rate (module defaults, read at
    call time, for any argument not given)."""
    cell_payload = CELL_PAYLOAD_BYTES if cell_payload is None else cell_payload
    cell_header = CELL_HEADER_BYTES if cell_header is None else cell_header
    speedup = FABRIC_SPEEDUP if speedup is None else speedup
    return speedup / (1.0 + cell_header / cell_payload)


def fabric_links(topo) -> np.ndarray:
    """Mask over links: both ends are switches (the fabric links that carry cells)."""
    tier = topo.node_tier
    return (tier[topo.link_a] != HOST_TIER) & (tier[topo.link_b] != HOST_TIER)


def scheduled_rates_bps(topo, rates: np.ndarray) -> np.ndarray:
    """Directed-link rates (``2*link + dir``, as :func:`aifabric.flow.paths.directed_rates_bps`) with
    the fabric links at their packet-byte rate under the cell tax."""
    fab = np.repeat(fabric_links(topo), 2)
    out = np.asarray(rates, dtype=np.float64).copy()
    out[fab] = out[fab] * fabric_rate_factor()
    return out


__all__ = [
    "CELL_HEADER_BYTES",
    "CELL_PAYLOAD_BYTES",
    "FABRIC_SPEEDUP",
    "fabric_links",
    "fabric_rate_factor",
    "scheduled_rates_bps",
]

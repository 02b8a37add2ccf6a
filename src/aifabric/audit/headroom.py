"""PFC headroom: the SONiC dynamic-buffer formula and a vendor-neutral physical minimum.

Source: hardware-facts.md §E.1 and formats.md §1.12, which describe
``sonic-swss:cfgmgr/buffer_headroom_mellanox.lua`` with the ASIC constants of
``sonic-buildimage:platform/mellanox/asic_table.j2``. All sizes are bytes; SONiC's "KB" ASIC
constants are KiB (×1024), as the lua multiplies them by 1024.

Checked against the real SN5600 (Spectrum-4) table with ``small_packet_percentage = 100``:
400G/300m → xoff 677888, size 697344 (exact); 800G/5m as an 8-lane port → xon 38912, size 304128
(exact), xoff 256000 (table 257024). It does **not** reproduce the old Spectrum-1 tables
(formats.md §1.12), so the audit uses it as a hard limit only on Spectrum-4 and later.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aifabric.pfc import (  # the PFC vocabulary and headroom physics the engine shares
    DEFAULT_PORT_MTU,
    PFC_RESPONSE_BYTES,
    ROCE_FRAME_BYTES,
    SPEED_OF_LIGHT_M_S,
    cable_bytes,
    headroom_floor,
)

__all__ = [
    "ASICS",
    "DEFAULT_PORT_MTU",
    "PFC_RESPONSE_BYTES",
    "ROCE_FRAME_BYTES",
    "SPEED_OF_LIGHT_M_S",
    "cable_bytes",
    "minimum_xoff",
    "sonic_headroom",
]

# §E.1 step 1: pause quanta the peer may still send after PAUSE (IEEE 802.3 Annex 31B), per Mb/s.
PAUSE_QUANTA = {
    10000: 67,
    25000: 80,
    40000: 118,
    50000: 147,
    100000: 394,
    200000: 453,
    400000: 905,
    800000: 905,
}
DEFAULT_LOSSLESS_MTU = 1024  # LOSSLESS_TRAFFIC_PATTERN.mtu default (formats.md §1.11)


@dataclass(frozen=True)
class AsicConstants:
    """ASIC_TABLE row (hardware-facts §E.1, [S8]); latencies in KiB as SONiC writes them."""

    cell_bytes: int
    pipeline_latency_kib: float
    mac_phy_delay_kib: float
    peer_response_time_kib: float
    tile_bytes_per_gbps: float = 0.0  # Spectrum-4/5 "kB on tile" = speed_Gbps × 120 / 8
    extra_xoff_bytes: int = 0  # Spectrum-6 adds 18 KiB


ASICS: dict[str, AsicConstants] = {
    "spectrum-1": AsicConstants(96, 19, 0.8, 3.8),
    "spectrum-2": AsicConstants(144, 19, 0.8, 3.8),
    "spectrum-3": AsicConstants(144, 19, 0.8, 3.8),
    "spectrum-4": AsicConstants(192, 19, 0.8, 3.8, tile_bytes_per_gbps=120 / 8),
    "spectrum-5": AsicConstants(192, 19, 0.8, 3.8, tile_bytes_per_gbps=120 / 8),
    "spectrum-6": AsicConstants(256, 42, 0.8, 3.8, extra_xoff_bytes=18 * 1024),
}
# ASICs whose published lookup tables the formula reproduces (formats.md §1.12).
FORMULA_VERIFIED = frozenset({"spectrum-4", "spectrum-5"})


@dataclass(frozen=True)
class Headroom:
    xon_bytes: int
    xoff_bytes: int
    size_bytes: int


def _ceil_1024(x: float) -> int:
    return int(math.ceil(x / 1024.0 - 1e-9)) * 1024


def sonic_headroom(
    speed_mbps: int,
    cable_m: float,
    *,
    asic: str = "spectrum-4",
    port_mtu: int = DEFAULT_PORT_MTU,
    lossless_mtu: int = DEFAULT_LOSSLESS_MTU,
    small_packet_percentage: int = 100,
    shared_headroom_pool: bool = False,
    eight_lanes: bool | None = None,
    gearbox_delay_ns: float = 0.0,
) -> Headroom:
    """xon/xoff/size of a lossless PG by the SONiC Mellanox formula (§E.1 steps 1-9).

    ``eight_lanes`` defaults to True at 800G (an OSFP 8×100G port). ``small_packet_percentage``
    other than 100 uses the plain packet-count mix ``(100 − p + p·w)/100``.
    """
    c = ASICS[asic]
    quanta = PAUSE_QUANTA.get(int(speed_mbps))
    peer = quanta * 512 / 8 if quanta is not None else c.peer_response_time_kib * 1024
    gearbox = speed_mbps * 1e6 * gearbox_delay_ns * 1e-9 / 8
    tile = speed_mbps / 1000 * c.tile_bytes_per_gbps
    propagation = (
        port_mtu + cable_bytes(speed_mbps, cable_m) + 2 * gearbox + c.mac_phy_delay_kib * 1024 + peer + tile
    )
    cell = c.cell_bytes
    worst = math.ceil(cell / 64) if cell > 128 else math.ceil(2 * cell / (1 + cell))
    p = small_packet_percentage
    occupancy = worst if p == 100 else (100 - p + p * worst) / 100
    xoff = _ceil_1024(lossless_mtu + propagation * occupancy) + c.extra_xoff_bytes
    if eight_lanes is None:
        eight_lanes = speed_mbps >= 800000
    xon = _ceil_1024(c.pipeline_latency_kib * 1024) * (2 if eight_lanes else 1)
    size = xon if shared_headroom_pool else _ceil_1024(xoff + xon + (port_mtu if eight_lanes else 0))
    return Headroom(xon_bytes=xon, xoff_bytes=xoff, size_bytes=size)


def minimum_xoff(
    speed_mbps: int, cable_m: float, port_mtu: int = DEFAULT_PORT_MTU, frame_bytes: int = ROCE_FRAME_BYTES
) -> int:
    """Vendor-neutral floor for PFC headroom: the cable round trip at the port speed, plus two
    maximum frames — the frame being sent when XOFF is due (any class: the port MTU) and the
    lossless frame the peer is sending when PAUSE lands (``frame_bytes``: a RoCE frame, or
    LOSSLESS_TRAFFIC_PATTERN mtu) — plus the PFC response time (:data:`PFC_RESPONSE_BYTES`).
    These are the cable, MTU and response terms of §E.1 step 5 without the cell and pipeline
    terms. All 45 rows of the three real pg_profile_lookup.ini tables and the 10 pg_lossless
    profiles of the real SN2700 config are above it (closest: SN2700 10G/40m,
    22528 B against 17697 B)."""
    return headroom_floor(speed_mbps, cable_m, port_mtu, frame_bytes)

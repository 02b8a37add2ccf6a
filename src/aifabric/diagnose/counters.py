"""Counter snapshots onto the fabric: per egress port (``device`` → ``peer``) what happened over
the interval, merged from both ends of the link.

Two or more scrapes of a counter give its increase between the first and the last (a counter that
went down was reset: the last value is taken as the increase); one scrape is read as counted since
the counters were cleared. The interval comes from the samples' times, else from ``--interval``,
else from the files' ``# interval:`` line; without one, time ratios (pause ratio, utilisation,
transmit-wait ratio) are not computed and the findings that need them are skipped (and the output
says so).

Both ends describe an egress: PAUSE the peer sent (its ``pfc_tx_*``) is PAUSE this port received
(``pfc_rx_*``); bytes this port sent are bytes the peer received. Where both ends report, the larger
is kept (a counter missing at one end is not zero).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from aifabric.diagnose import metrics as M
from aifabric.diagnose.fabric import FabricMap, Port
from aifabric.diagnose.readers import Scrape
from aifabric.errors import InputError

# NVIDIA Quantum, Quantum-2 and Quantum-3 count one PortXmitWait tick per 8 bytes of port time
# (tick == 7: lost bytes = counter × 8) — NVIDIA ibdiagnet User Manual v2.13, "Congestion
# Assessment on InfiniBand Links". Switch-IB / Switch-X count 32 bytes per lane (not modelled).
XMIT_WAIT_BYTES_PER_TICK = 8


@dataclass
class Egress:
    """What one egress (``port.device`` → ``port.peer``) did over the interval."""

    port: Port
    tx_bytes: float = math.nan
    tx_packets: float = math.nan
    pause_seen: dict[str, float] = field(default_factory=dict)  # PAUSE frames by the end that counted them
    held_us: float = math.nan  # this egress held by the peer's PAUSE (max over priorities)
    wait_ticks: float = math.nan  # IB PortXmitWait of this egress
    ecn_marks: float = 0.0
    drops: float = 0.0
    wd_storms: float = 0.0  # PFC watchdog storms on this egress's queue
    watermark_bytes: float = math.nan
    rx_errors: float = 0.0  # errors the peer received from this egress (the link's health)
    symbol_errors: float = 0.0
    link_downed: float = 0.0
    oper_up: float = math.nan
    rate_gbps: float = math.nan  # the rate the device reports now
    nic: dict[str, float] = field(default_factory=dict)  # host NIC counters (CNP, out of sequence)

    @property
    def pause_frames(self) -> float:
        """PAUSE frames the peer sent to this egress (all priorities; the larger end's count)."""
        return max(self.pause_seen.values(), default=0.0)

    def utilisation(self, interval_s: float | None) -> float:
        if not interval_s or math.isnan(self.tx_bytes) or self.port.rate_gbps <= 0:
            return math.nan
        return self.tx_bytes * 8 / (self.port.rate_gbps * 1e9 * interval_s)

    def held_ratio(self, interval_s: float | None) -> float:
        """Share of the interval this egress could not send: PAUSE from the peer or no IB credits."""
        if not interval_s or (math.isnan(self.held_us) and math.isnan(self.wait_ticks)):
            return math.nan  # no duration counter for this egress (e.g. SONiC show pfc counters)
        held = 0.0 if math.isnan(self.held_us) else self.held_us * 1e-6
        if not math.isnan(self.wait_ticks) and self.port.rate_gbps > 0:
            held = max(held, self.wait_ticks * XMIT_WAIT_BYTES_PER_TICK * 8 / (self.port.rate_gbps * 1e9))
        return min(1.0, held / interval_s)


@dataclass
class FabricCounters:
    """Every egress of the fabric with its counters, the interval, and what did not match."""

    fabric: FabricMap
    egress: dict[tuple[str, str], Egress]
    interval_s: float | None
    unmatched: list[str]
    formats: list[str]
    seen: set[str] = field(default_factory=set)  # canonical counters present in the data

    def of(self, port: Port) -> Egress:
        return self.egress[(port.device, port.label)]


def build(fabric: FabricMap, scrapes: list[Scrape], interval_s: float | None = None) -> FabricCounters:
    """Resolve every sample to a port, take increases, merge both ends (see the module doc)."""
    series: dict[tuple, list[tuple[float | None, int, float]]] = defaultdict(list)
    unmatched: dict[str, None] = {}
    for k, sc in enumerate(scrapes):
        for s in sc.samples:
            port = fabric.resolve(s.device, s.port)
            if port is None:
                unmatched[f"{s.device}:{s.port}"] = None
                continue
            series[(port.device, port.label, s.counter, s.prio)].append((s.time_s, k, s.value))
    if not series:
        shown = ", ".join(list(unmatched)[:4])
        raise InputError(
            "no counter matches a port of the topology",
            file=", ".join(sc.source for sc in scrapes[:3]),
            field="--counters",
            value=shown or None,
            allowed=f"device and port names as in {fabric.source}",
        )
    values, spans = {}, []
    for key, pts in series.items():
        pts.sort(key=lambda x: (x[0] if x[0] is not None else 0.0, x[1]))
        if key[2] in M.GAUGES or len(pts) == 1:
            values[key] = pts[-1][2]
            continue
        first, last = pts[0], pts[-1]
        values[key] = last[2] - first[2] if last[2] >= first[2] else last[2]
        if first[0] is not None and last[0] is not None and last[0] > first[0]:
            spans.append(last[0] - first[0])
    if interval_s is None and spans:
        spans.sort()
        interval_s = spans[len(spans) // 2]
    if interval_s is None:
        given = [sc.interval_s for sc in scrapes if sc.interval_s]
        interval_s = max(given) if given else None
    egress = {k: Egress(p) for k, p in fabric.ports.items()}
    for (dev, label, counter, prio), v in values.items():
        _apply(fabric, egress, fabric.ports[(dev, label)], counter, prio, v)
    seen = {k[2] for k in series}
    return FabricCounters(
        fabric, egress, interval_s, list(unmatched), sorted({sc.format for sc in scrapes}), seen
    )


def _max(a: float, b: float) -> float:
    return b if math.isnan(a) else (a if math.isnan(b) else max(a, b))


def _apply(fabric: FabricMap, egress: dict, port: Port, counter: str, prio, v: float) -> None:
    """One counter of one port onto the egress it describes (this port's, or the peer's)."""
    mine = egress[(port.device, port.label)]
    back = egress[(port.peer, port.peer_label)]  # the peer's egress towards this port
    if counter == "tx_bytes":
        mine.tx_bytes = _max(mine.tx_bytes, v)
    elif counter == "rx_bytes":
        back.tx_bytes = _max(back.tx_bytes, v)
    elif counter == "tx_packets":
        mine.tx_packets = _max(mine.tx_packets, v)
    elif counter == "rx_packets":
        back.tx_packets = _max(back.tx_packets, v)
    elif counter == "pfc_rx_frames":  # PAUSE this port received: its own egress is paused
        _count(mine, "rx" if prio is not None else "rx-all", v)
    elif counter == "pfc_tx_frames":  # PAUSE this port sent: the peer's egress is paused
        _count(back, "tx" if prio is not None else "tx-all", v)
    elif counter == "pfc_rx_pause_us":
        mine.held_us = _max(mine.held_us, v)
    elif counter == "pfc_tx_pause_us":
        back.held_us = _max(back.held_us, v)
    elif counter == "xmit_wait_ticks":
        mine.wait_ticks = _max(mine.wait_ticks, v)
    elif counter == "ecn_marked_packets":
        mine.ecn_marks += v
    elif counter == "tx_drops":
        mine.drops += v
    elif counter == "pfcwd_storms":
        mine.wd_storms += v
    elif counter == "queue_watermark_bytes":
        mine.watermark_bytes = _max(mine.watermark_bytes, v)
    elif counter == "rx_errors":
        back.rx_errors = max(back.rx_errors, v)
    elif counter in ("symbol_errors", "link_downed"):
        for e in (mine, back):
            setattr(e, counter, max(getattr(e, counter), v))
    elif counter == "oper_up":
        for e in (mine, back):
            e.oper_up = v if math.isnan(e.oper_up) else min(e.oper_up, v)
    elif counter == "rate_gbps":
        for e in (mine, back):
            e.rate_gbps = v if math.isnan(e.rate_gbps) else min(e.rate_gbps, v)
    elif counter == "rx_drops":
        back.drops += v
    else:  # NIC-side counters (CNP, ECN-marked arrivals, out of sequence, retransmission)
        mine.nic[counter] = mine.nic.get(counter, 0.0) + v


def _count(e: Egress, end: str, v: float) -> None:
    e.pause_seen[end] = e.pause_seen.get(end, 0.0) + v

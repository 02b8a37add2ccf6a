"""Findings from a fabric's counters: each with a location (``device:port`` as the topology names
it), the evidence (the numbers that triggered it) and what to check.

Rules (thresholds are this tool's, no public source gives them; each is a named constant):

* ``link-down`` / ``link-degraded`` / ``link-errors`` / ``link-flap`` — a port reported down, below
  the rate the topology gives it, with receive / symbol errors, or with link-down events.
* ``stuck-receiver`` / ``slow-receiver`` — a host that holds its switch port: PFC PAUSE from the NIC
  (RoCE) or credits withheld (InfiniBand PortXmitWait on the switch's host port); stuck when held
  ≥ :data:`STUCK_SHARE` of the time or when the PFC watchdog declared a storm on that port.
* ``congestion-spreading`` — egresses held ≥ :data:`HELD_SHARE` (PAUSE or no credits) traced
  downstream to their root: a busy port (``cause: incast``), a held host (``slow-receiver``) or a
  switch that pauses without being congested (``pause-source``).
* ``incast`` — a host port busy ≥ :data:`BUSY_SHARE` with a deep queue (≥ :data:`INCAST_QUEUE_BYTES`)
  or at the root of a congestion tree.
* ``pause-storm`` — a switch that PAUSEs ≥ :data:`STORM_PORT_SHARE` of its links while none of its
  own egresses is busy or held: PAUSE not caused by congestion (firmware, a stuck queue).
* ``pfc-threshold-mismatch`` — switches of one tier where some (at least :data:`MISMATCH_GROUP`: a
  batch) PAUSE and their peers, carrying comparable traffic, do not, and the pausing ones are
  neither busy nor held downstream (they pause earlier: a lower xoff); a single such switch is
  left to ``--configs`` (the ``audit`` join), which compares the thresholds themselves.
* ``no-congestion-control`` — PAUSE spreading (RoCE) with no ECN mark and no CNP counted anywhere,
  where those counters were collected.
* ``ecn-threshold-low`` — a switch egress marking ≥ :data:`ECN_MARK_SHARE` of its packets while not
  busy: marking below the queue a congestion point builds.
* ``lossy-class`` — RoCE packets dropped at a switch while no PAUSE was sent there (traffic in a
  lossy class) or NICs counting out-of-sequence arrivals.
* ``ecmp-imbalance`` / ``ecmp-polarisation`` — uplink bytes of a switch max / mean ≥
  :data:`IMBALANCE_RATIO` (InfiniBand: warning; RoCE ECMP: info, hash collisions of few flows are
  expected), and, above the first hashing tier, most uplinks idle on most switches of the tier
  (the same hash seed on consecutive tiers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from aifabric.diagnose.counters import Egress, FabricCounters

# ASSUMPTION (no public source): thresholds of this tool, checked on the risk-library closed loop
# (aifabric validate --diagnose); each finding carries the measured value so a user can judge it
HELD_SHARE = 0.05  # an egress held (PAUSE / no credits) this share of the interval is in a tree
BUSY_SHARE = 0.8  # an egress this busy is a congestion point
HOST_HOLD_SHARE = 0.005  # a host NIC holding its port this share of the time is slow
STUCK_SHARE = 0.9  # ... and this share: stuck
STORM_PORT_SHARE = 0.75  # a switch pausing this share of its links, uncongested: a storm
INCAST_QUEUE_BYTES = 256 * 1024  # a host port's queue this deep: many-to-one
ECN_MARK_SHARE = 0.05  # an egress marking this share of its packets while not busy
IMBALANCE_RATIO = 2.0  # uplink bytes max / mean
POLARISED_IDLE_SHARE = 0.5  # idle uplinks on a polarised tier
MISMATCH_GROUP = 2  # switches of a tier pausing unpressed: a batch, not one transient


@dataclass
class Finding:
    kind: str
    location: str
    severity: str  # error | warning | info
    evidence: dict
    check: str
    root: str | None = None  # the device a symptom is traced to (congestion-spreading)
    peer: str | None = None  # the device at the other end of the location's link

    def to_dict(self) -> dict:
        ev = dict(self.evidence)
        if self.peer and "peer" not in ev:
            ev["peer"] = self.peer
        return {
            "kind": self.kind,
            "location": self.location,
            "severity": self.severity,
            "evidence": ev,
            "check": self.check,
        }


@dataclass
class Context:
    fc: FabricCounters
    findings: list[Finding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def t(self) -> float | None:
        return self.fc.interval_s

    def held(self, e: Egress) -> float:
        return e.held_ratio(self.t)

    def in_tree(self, e: Egress) -> bool:
        """Held ≥ HELD_SHARE, or (no duration counter) PAUSEd at all."""
        h = self.held(e)
        return h >= HELD_SHARE if not math.isnan(h) else e.pause_frames > 0

    def busy(self, e: Egress) -> float:
        return e.utilisation(self.t)

    def add(self, *args, **kw) -> None:
        self.findings.append(Finding(*args, **kw))


def _r(x: float, nd: int = 3):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), nd)


def technology(fc: FabricCounters) -> str:
    if fc.fabric.technology:
        return fc.fabric.technology
    ib = any(not math.isnan(e.wait_ticks) for e in fc.egress.values())
    return "infiniband" if ib else "roce"


def diagnose_counters(fc: FabricCounters) -> tuple[list[Finding], list[str]]:
    """Every rule over the counters; (findings, notes on what could not be checked)."""
    ctx = Context(fc)
    if ctx.t is None:
        ctx.skipped.append(
            "no interval known (one scrape without '# interval:' and no --interval): pause ratios, "
            "utilisation and transmit-wait ratios not computed"
        )
    tech = technology(fc)
    _links(ctx)
    _receivers(ctx)
    if tech == "roce":
        _pause_sources(ctx)
        _lossy(ctx)
        _ecn(ctx)
    _trees(ctx)
    _incast(ctx)
    _balance(ctx, tech)
    if tech == "roce":
        _no_cc(ctx)
    order = {"error": 0, "warning": 1, "info": 2}
    ctx.findings.sort(key=lambda f: (order[f.severity], f.kind, f.location))
    return ctx.findings, ctx.skipped


# ---- links ---------------------------------------------------------------------------------------
def _links(ctx: Context) -> None:
    done = set()
    for e in ctx.fc.egress.values():
        p = e.port
        if p.link in done:
            continue
        back = ctx.fc.egress[(p.peer, p.peer_label)]
        idle = (e.tx_bytes or 0) + (back.tx_bytes or 0) == 0
        if e.oper_up == 0 or (max(e.link_downed, back.link_downed) > 0 and idle):
            done.add(p.link)
            ctx.add(
                "link-down",
                p.name,
                "error",
                {"oper_up": 0, "link_downed": _r(e.link_downed)},
                f"the link {p.name} - {p.peer}:{p.peer_label}: optics, cable, port state; routes "
                "re-converged around it",
                peer=p.peer,
            )
            continue
        if not math.isnan(e.rate_gbps) and p.rate_gbps > 0 and e.rate_gbps < 0.99 * p.rate_gbps:
            done.add(p.link)
            ctx.add(
                "link-degraded",
                p.name,
                "warning",
                {"rate_gbps": _r(e.rate_gbps), "expected_gbps": _r(p.rate_gbps)},
                "a lane down or the link trained at a lower speed: cable / transceiver, auto-negotiation",
                peer=p.peer,
            )
        elif e.link_downed > 0:
            done.add(p.link)
            ctx.add(
                "link-flap",
                p.name,
                "warning",
                {"link_downed": _r(e.link_downed)},
                "the link went down and came back: transceiver, cable, FEC",
                peer=p.peer,
            )
        elif e.rx_errors > 0 or e.symbol_errors > 0:
            done.add(p.link)
            ctx.add(
                "link-errors",
                p.name,
                "warning",
                {"rx_errors": _r(e.rx_errors), "symbol_errors": _r(e.symbol_errors)},
                "bit errors on the link: clean / reseat the connectors, check the transceiver's "
                "receive power",
                peer=p.peer,
            )


# ---- receivers ---------------------------------------------------------------------------------
def _host_ports(ctx: Context):
    for e in ctx.fc.egress.values():
        if e.port.tier >= 1 and e.port.peer_tier == 0:
            yield e


def _receivers(ctx: Context) -> None:
    for e in _host_ports(ctx):
        h = ctx.held(e)
        host = e.port.peer
        ev = {"held_ratio": _r(h), "pause_frames": _r(e.pause_frames)}
        if e.wd_storms > 0:
            ev["pfc_watchdog_storms"] = _r(e.wd_storms)
            ctx.add(
                "stuck-receiver",
                host,
                "error",
                ev,
                f"{host}'s NIC stopped draining and the PFC watchdog on {e.port.name} cut it off: the "
                "host's NIC / driver / PCIe (a hung GPU or a firmware fault)",
                peer=e.port.device,
            )
        elif not math.isnan(h) and h >= STUCK_SHARE:
            ctx.add(
                "stuck-receiver",
                host,
                "error",
                ev,
                f"{host} holds {e.port.name} almost all the time: its NIC is not draining (driver, "
                "PCIe, firmware); without the PFC watchdog the pause spreads",
                peer=e.port.device,
            )
        elif not math.isnan(h) and h >= HOST_HOLD_SHARE:
            ctx.add(
                "slow-receiver",
                host,
                "warning",
                ev,
                f"{host} receives slower than its link: NIC receive buffers / PCIe / host memory "
                "bandwidth, its NIC firmware",
                peer=e.port.device,
            )
        elif math.isnan(h) and e.pause_frames > 0:
            ctx.add(
                "slow-receiver",
                host,
                "warning",
                ev,
                f"{host}'s NIC sends PAUSE: it cannot keep up with what it receives (no pause "
                "duration counter in the data to say how long)",
                peer=e.port.device,
            )


# ---- PAUSE sources (RoCE) --------------------------------------------------------------------------
def _pressed(ctx: Context, device: str) -> bool:
    """Whether any of ``device``'s egresses is busy or held (a reason for it to PAUSE)."""
    for p in ctx.fc.fabric.device_ports(device):
        e = ctx.fc.of(p)
        if ctx.busy(e) >= BUSY_SHARE or ctx.in_tree(e):
            return True
    return False


def _paused_by(ctx: Context, device: str) -> list[Egress]:
    """The egresses ``device`` PAUSEd (the peers' ports toward it)."""
    out = []
    for p in ctx.fc.fabric.device_ports(device):
        back = ctx.fc.egress[(p.peer, p.peer_label)]
        if back.pause_frames > 0 or (not math.isnan(back.held_us) and back.held_us > 0):
            out.append(back)
    return out


def _pause_sources(ctx: Context) -> None:
    fab = ctx.fc.fabric
    switches = [d for d in fab.devices if fab.tiers.get(d, 1) >= 1]
    storms = set()
    for d in switches:
        links = fab.device_ports(d)
        paused = _paused_by(ctx, d)
        if len(links) >= 2 and len(paused) >= STORM_PORT_SHARE * len(links) and not _pressed(ctx, d):
            storms.add(d)
            ctx.add(
                "pause-storm",
                d,
                "error",
                {
                    "ports_paused": len(paused),
                    "ports": len(links),
                    "pause_ratio_max": _r(max(ctx.held(e) for e in paused)),
                    "pause_frames": _r(sum(e.pause_frames for e in paused)),
                },
                f"{d} sends PAUSE to its neighbours without being congested: its flow-control "
                "firmware, a stuck queue; the PFC watchdog does not see pauses this short",
            )
    by_tier: dict[int, list[str]] = {}
    for d in switches:
        by_tier.setdefault(fab.tiers[d], []).append(d)
    for members in by_tier.values():
        pausing = {d: _paused_by(ctx, d) for d in members if d not in storms}
        quiet = [d for d, v in pausing.items() if not v]
        if not quiet or len(quiet) == len(pausing):
            continue
        load = {d: _rx_bytes(ctx, d) for d in members}
        ref = sorted(load[d] for d in quiet)[len(quiet) // 2]
        odd = {d: v for d, v in pausing.items() if v and not _pressed(ctx, d) and 0 < load[d] <= 4 * ref}
        if len(odd) < MISMATCH_GROUP:
            continue
        for d, v in odd.items():
            ctx.add(
                "pfc-threshold-mismatch",
                d,
                "warning",
                {
                    "pause_frames": _r(sum(e.pause_frames for e in v)),
                    "ports_paused": len(v),
                    "peers_not_pausing": sorted(quiet)[:8],
                    "rx_bytes_vs_peers": _r(load[d] / ref),
                },
                f"{d} PAUSEs while same-tier switches with comparable traffic do not, and nothing "
                "downstream of it is congested: a lower PFC xoff (another batch / firmware) — compare "
                "its buffer profile with its peers' (aifabric audit --configs)",
            )


def _rx_bytes(ctx: Context, device: str) -> float:
    tot = 0.0
    for p in ctx.fc.fabric.device_ports(device):
        b = ctx.fc.egress[(p.peer, p.peer_label)].tx_bytes
        tot += 0.0 if math.isnan(b) else b
    return tot


# ---- drops, ECN ------------------------------------------------------------------------------------
def _lossy(ctx: Context) -> None:
    by_dev: dict[str, list[Egress]] = {}
    for e in ctx.fc.egress.values():
        if e.drops > 0 and e.port.tier >= 1:
            by_dev.setdefault(e.port.device, []).append(e)
    for d, es in sorted(by_dev.items()):
        if any(x.pause_frames > 0 for x in _paused_by(ctx, d)):
            continue  # PFC is acting here: a lossless class that overflowed, reported by the engine
        ctx.add(
            "lossy-class",
            d,
            "error",
            {"drops": _r(sum(e.drops for e in es)), "ports": len(es), "pause_frames_sent": 0},
            f"RoCE packets dropped at {d} with no PFC PAUSE sent: the traffic runs in a lossy "
            "class — DSCP / trust mapping, PFC enabled on the right priority, host and switch "
            "agreeing on the class (aifabric audit)",
        )
    oos = sum(e.nic.get("out_of_sequence", 0.0) for e in ctx.fc.egress.values())
    if oos > 0 and not by_dev:
        ctx.add(
            "lossy-class",
            "fabric",
            "warning",
            {"out_of_sequence": _r(oos)},
            "NICs count out-of-sequence arrivals (go-back-N after a loss): find the dropping hop",
        )


def _ecn(ctx: Context) -> None:
    for e in ctx.fc.egress.values():
        if e.port.tier < 1 or e.ecn_marks <= 0 or math.isnan(e.tx_packets) or e.tx_packets <= 0:
            continue
        share = e.ecn_marks / e.tx_packets
        busy = ctx.busy(e)
        if share >= ECN_MARK_SHARE and not busy >= BUSY_SHARE:
            ctx.add(
                "ecn-threshold-low",
                e.port.name,
                "warning",
                {"marked_share": _r(share), "utilisation": _r(busy), "ecn_marks": _r(e.ecn_marks)},
                "ECN marks on a port that is not a congestion point: kmin / kmax / pmax below the "
                "queue an ECMP collision builds (compare with the reference profile); DCQCN then "
                "cuts flows that were not congested",
                peer=e.port.peer,
            )


def _no_cc(ctx: Context) -> None:
    seen_ecn = any(k in ctx.fc.seen for k in ("ecn_marked_packets", "np_cnp_sent", "rp_cnp_handled"))
    if not seen_ecn:
        return
    held = [e for e in ctx.fc.egress.values() if ctx.in_tree(e)]
    marks = sum(
        e.ecn_marks + e.nic.get("np_cnp_sent", 0) + e.nic.get("rp_cnp_handled", 0)
        for e in ctx.fc.egress.values()
    )
    if len(held) >= 2 and marks == 0:
        ctx.add(
            "no-congestion-control",
            "fabric",
            "warning",
            {"held_ports": len(held), "ecn_marks": 0, "cnps": 0},
            "PAUSE spreads and nothing marks ECN or sends CNPs: ECN off on the switches or DCQCN "
            "off on the NICs (PFC alone holds the fabric lossless)",
        )


# ---- congestion trees --------------------------------------------------------------------------
def _trees(ctx: Context) -> None:
    members = [e for e in ctx.fc.egress.values() if ctx.in_tree(e) and e.port.peer_tier >= 1]
    roots: dict[str, dict] = {}
    for e in members:
        for root, cause in _roots(ctx, e):
            r = roots.setdefault(root.port.name, {"egress": root, "cause": cause, "held": []})
            r["held"].append(ctx.held(e) if not math.isnan(ctx.held(e)) else 0.0)
    for name, r in roots.items():
        if len(r["held"]) < 2:
            continue
        root = r["egress"]
        ctx.add(
            "congestion-spreading",
            name,
            "warning",
            {
                "held_ports": len(r["held"]),
                "held_ratio_max": _r(max(r["held"])),
                "cause": r["cause"],
                "root_utilisation": _r(ctx.busy(root)),
                "root_held_ratio": _r(ctx.held(root)),
            },
            "PAUSE / credit back-pressure spreads upstream from this port: victims share its "
            f"tree; fix the cause ({r['cause']})",
            root=root.port.peer,
            peer=root.port.peer,
        )


def _roots(ctx: Context, start: Egress) -> list[tuple[Egress, str]]:
    """Downstream from a held egress to the ports that explain it."""
    fab = ctx.fc.fabric
    out, seen, stack = [], set(), [start]
    while stack:
        e = stack.pop()
        if e.port.name in seen:
            continue
        seen.add(e.port.name)
        nxt = [ctx.fc.of(p) for p in fab.device_ports(e.port.peer) if p.peer != e.port.device]
        held = [x for x in nxt if ctx.in_tree(x)]
        busy = [x for x in nxt if ctx.busy(x) >= BUSY_SHARE and x not in held]
        if e.port.peer_tier == 0:
            out.append((e, "slow-receiver" if ctx.held(e) >= HOST_HOLD_SHARE else "incast"))
        elif busy:
            out.extend((x, "incast" if x.port.peer_tier == 0 else "busy link") for x in busy)
        elif held:
            stack.extend(held)
        else:
            out.append((e, "pause-source"))
    return out


def _incast(ctx: Context) -> None:
    rooted = {f.location for f in ctx.findings if f.kind == "congestion-spreading"}
    for e in _host_ports(ctx):
        busy = ctx.busy(e)
        deep = not math.isnan(e.watermark_bytes) and e.watermark_bytes >= INCAST_QUEUE_BYTES
        if busy >= BUSY_SHARE and (deep or e.port.name in rooted) and ctx.held(e) < HOST_HOLD_SHARE:
            ctx.add(
                "incast",
                e.port.name,
                "warning",
                {"utilisation": _r(busy), "queue_watermark_bytes": _r(e.watermark_bytes, 0)},
                f"many senders converge on {e.port.peer}: storage / checkpoint traffic sharing the "
                "fabric, an all-to-all hot spot — separate the traffic class or pace the senders",
                peer=e.port.peer,
            )


# ---- load balance --------------------------------------------------------------------------------
def _balance(ctx: Context, tech: str) -> None:
    fab = ctx.fc.fabric
    by_tier: dict[int, list[tuple[str, list[float]]]] = {}
    for d in fab.devices:
        ups = [ctx.fc.of(p) for p in fab.device_ports(d) if p.peer_tier > p.tier and p.tier >= 1]
        live = [0.0 if math.isnan(e.tx_bytes) else e.tx_bytes for e in ups if e.oper_up != 0]
        if len(live) >= 2 and sum(live) > 0:
            by_tier.setdefault(fab.tiers[d], []).append((d, live))
    polarised = set()
    for tier, rows in by_tier.items():
        if tier < 2 or tech != "roce":
            continue
        idle = [sum(1 for b in ups if b == 0) / len(ups) for _, ups in rows]
        if len(rows) >= 2 and sum(1 for x in idle if x >= POLARISED_IDLE_SHARE) >= 0.75 * len(rows):
            for (d, ups), x in zip(rows, idle, strict=True):
                if x >= POLARISED_IDLE_SHARE:
                    polarised.add(d)
                    ctx.add(
                        "ecmp-polarisation",
                        d,
                        "warning",
                        {
                            "idle_uplinks": sum(1 for b in ups if b == 0),
                            "uplinks": len(ups),
                            "switches_polarised": sum(1 for y in idle if y >= POLARISED_IDLE_SHARE),
                            "tier_switches": len(rows),
                        },
                        "most uplinks idle on most switches of this tier: the tier below made the "
                        "same hash choice — give each tier its own ECMP hash seed / function",
                    )
    for rows in by_tier.values():
        for d, ups in rows:
            if d in polarised:
                continue
            mean = sum(ups) / len(ups)
            ratio = max(ups) / mean
            if ratio >= IMBALANCE_RATIO:
                sev = "warning" if tech == "infiniband" else "info"
                ctx.add(
                    "ecmp-imbalance",
                    d,
                    sev,
                    {
                        "max_over_mean": _r(ratio),
                        "idle_uplinks": sum(1 for b in ups if b == 0),
                        "uplinks": len(ups),
                    },
                    "uplink bytes uneven: InfiniBand — adaptive routing off / the routing engine's "
                    "LFTs (ibdiagnet); RoCE — ECMP hash collisions of few large flows (expected with "
                    "ECMP; adaptive routing or more QPs per connection spread them)",
                )

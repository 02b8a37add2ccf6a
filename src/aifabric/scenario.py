"""Scenario files: one YAML file → a frozen, validated :class:`Scenario` (pydantic v2).

Units are parsed once here: sizes to bytes (``*_bytes``), rates to bit/s (``*_bps``), times to
picoseconds (``*_ps``). In YAML users write ``link_rate: 100Gbps``, ``mtu: 4000B``,
``until: 20ms``; the model exposes ``link_rate_bps``, ``mtu_bytes``, ``until_ps`` as properties
and keeps the YAML spelling as the field name. Unknown keys are errors. Defaults that are not in
the file are filled from the sourced values in :data:`DEFAULTS` (each with its source).

:func:`load_scenario` raises :class:`~aifabric.errors.InputErrors` with one line per problem:
``FILE: field.path: problem (got ...); allowed: ...``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from aifabric.errors import InputError, InputErrors
from aifabric.units import UnitError, parse_rate, parse_size, parse_time

# ---- sourced defaults -----------------------------------------------------------------------
# name -> (value, source). Values in base units (bytes, bit/s, ps). Where the number lives in the
# packaged defaults.yaml, it is read from there (:func:`_from_defaults`), so there is one copy.
_PEER_MTU = 4000  # the peer scenarios' MTU payload, bytes (htsim's Packet::data_packet_size)


def _from_defaults(path: str, scale: float = 1.0):
    from aifabric.hardware.catalog import default_leaf

    leaf = default_leaf(path)
    value = leaf["value"]
    return (
        value * scale if isinstance(value, int | float) else value,
        f"defaults.yaml {path} ({leaf.get('source') or leaf.get('confidence')}): {leaf.get('note') or ''}".strip(),
    )


DEFAULTS: dict[str, tuple[Any, str] | tuple[str, float]] = {
    "roce.header_bytes": (
        64,
        "peer scenarios (htsim/ns-3 runs in peer-baselines.md): 64 B per packet; "
        "RoCEv2 Eth+IPv4+UDP+BTH+ICRC+FCS is 62 B",
    ),
    "infiniband.header_bytes": (26, "IBTA: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B"),
    "mtu_bytes": (4000, "peer scenarios: 4000 B payload (ns-3 PACKET_PAYLOAD_SIZE); IB MTU max 4096"),
    "switch_buffer_bytes": (
        32 * 2**20,
        "ns-3 HPCC: 32 MB shared buffer per switch at 100G (hardware-facts E.1)",
    ),
    "ack_bytes": (64, "peer scenarios: ACK/PAUSE frames 64 B"),
    "pfc.dynamic_alpha": (
        1 / 8,
        "ns-3 HPCC: dynamic threshold = free buffer >> 3 at NIC rate (hardware-facts E.1)",
    ),
    "hpcc.int_bytes": (
        42,
        "ns-3 HPCC (alibaba-edu/High-Precision-Congestion-Control int-header.h/.cc): IntHeader "
        "NORMAL mode = maxHop 5 x 8 B IntHop + 2 B nhop, in every data packet (SeqTsHeader 6 + 42) "
        "and ACK (qbbHeader 12 + 42)",
    ),
    "ib.vl_buffer_bytes": (
        None,
        "no public per-VL input buffer size for Quantum-2; the engine chooses and reports it",
    ),
    # read from defaults.yaml: (path, scale)
    # htsim counts its thresholds in payload MTUs (data_packet_size × 15 / × 12, main_roce.cpp
    # l. 304-305) against wire-size packets: 60,000 / 48,000 B, PAUSE on the 15th 4,064 B packet
    "pfc.xoff_bytes": ("pfc.static_xoff", _PEER_MTU),
    "pfc.xon_bytes": ("pfc.static_xon", _PEER_MTU),
    "ecn.kmin_bytes": ("ecn.ns3-mellanox.kmin", 1),
    "ecn.kmax_bytes": ("ecn.ns3-mellanox.kmax", 1),
    "ecn.pmax": ("ecn.ns3-mellanox.pmax", 1),
}


def default(name: str) -> Any:
    """The default value of ``name`` (see :data:`DEFAULTS`)."""
    return default_with_source(name)[0]


def default_with_source(name: str) -> tuple[Any, str]:
    """``(value, where it comes from)``."""
    entry = DEFAULTS[name]
    if isinstance(entry[0], str) and isinstance(entry[1], int | float) and not isinstance(entry[1], bool):
        return _from_defaults(entry[0], entry[1])
    return entry


# ---- unit-carrying field types ----------------------------------------------------------------
def _unit(parser, **kw):
    def conv(v):
        if v is None:
            return None
        try:
            return parser(v, **kw)
        except UnitError as exc:
            raise ValueError(f"cannot read {exc.value!r}; allowed: {exc.allowed}") from None

    return BeforeValidator(conv)


# Upper bounds keep every value (and sums of a few) inside the engines' int64 arithmetic and
# within what a simulation can mean: 1 PB, 1 Pb/s, 10^5 s of simulated time.
MAX_BYTES = 10**15
MAX_BPS = 10**15
MAX_PS = 10**17
MAX_COUNT = 10**9  # any count (hosts, switches, senders, ...)
DEFAULT_MAX_EVENTS = 10**9  # sim.max_events

Size = Annotated[int, _unit(parse_size, bare_ok=True), Field(ge=0, le=MAX_BYTES)]
PosSize = Annotated[int, _unit(parse_size, bare_ok=True), Field(gt=0, le=MAX_BYTES)]
Rate = Annotated[int, _unit(parse_rate), Field(gt=0, le=MAX_BPS)]
Time = Annotated[int, _unit(parse_time), Field(ge=0, le=MAX_PS)]
PosTime = Annotated[int, _unit(parse_time), Field(gt=0, le=MAX_PS)]
# an MTU: a minimal Ethernet payload (64 B) up to 64 KiB (jumbo frames are ≤ 9216 B, IB ≤ 4096 B)
Mtu = Annotated[int, _unit(parse_size, bare_ok=True), Field(ge=64, le=65536)]


def _not_bool(v):
    if isinstance(v, bool):  # pydantic's int would read true as 1 (seed: true)
        raise ValueError("a boolean is not a number; allowed: an integer")
    return v


def _count(lo: int, hi: int = MAX_COUNT):
    """An integer count in [lo, hi]: YAML booleans are refused, floats such as 2.5 are rejected
    by int parsing (4.0 is accepted as 4 by pydantic)."""
    return Annotated[int, BeforeValidator(_not_bool), Field(ge=lo, le=hi)]


class _Model(BaseModel):
    # allow_inf_nan=False: .inf / .nan in YAML (or Infinity in JSON) are errors, not numbers
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False)


# ---- topology ---------------------------------------------------------------------------------
TOPOLOGY_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    # kind: (required, optional)
    "fat-tree": ({"k"}, set()),
    "leaf-spine": ({"leaves", "spines", "hosts_per_leaf"}, {"links_per_spine", "uplink_rate"}),
    "rail-optimized": ({"gpus"}, {"gpus_per_node", "radix", "oversubscription", "planes"}),
    "star": ({"hosts"}, set()),
    "dumbbell": ({"hosts_left", "hosts_right"}, {"bottleneck_rate"}),
    "ring": ({"switches", "hosts_per_switch"}, set()),
    "hpcc-file": ({"path"}, set()),
    "ibnetdiscover": ({"path"}, set()),
}


class TopologySpec(_Model):
    """``topology:`` — which builder and its parameters."""

    kind: Literal[
        "fat-tree", "leaf-spine", "rail-optimized", "star", "dumbbell", "ring", "hpcc-file", "ibnetdiscover"
    ]
    link_rate: Rate = 100 * 10**9
    link_delay: Time = 10**6
    k: _count(2) | None = None
    leaves: _count(1) | None = None
    spines: _count(1) | None = None
    hosts_per_leaf: _count(1) | None = None
    links_per_spine: _count(1) | None = None
    uplink_rate: Rate | None = None
    gpus: _count(1) | None = None
    gpus_per_node: _count(1) | None = None
    radix: _count(2) | None = None
    oversubscription: Annotated[float, Field(ge=1, le=1000)] | None = None
    planes: _count(1) | None = None
    hosts: _count(1) | None = None
    hosts_left: _count(1) | None = None
    hosts_right: _count(1) | None = None
    bottleneck_rate: Rate | None = None
    switches: _count(3) | None = None
    hosts_per_switch: _count(1) | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _per_kind(self):
        required, optional = TOPOLOGY_FIELDS[self.kind]
        common = {"kind", "link_rate", "link_delay"}
        given = {f for f in type(self).model_fields if f not in common and getattr(self, f) is not None}
        missing = sorted(required - given)
        extra = sorted(given - required - optional)
        if missing:
            raise ValueError(f"kind {self.kind} needs {', '.join(missing)}")
        if extra:
            raise ValueError(
                f"{', '.join(extra)} not used by kind {self.kind}; "
                f"allowed: {', '.join(sorted(required | optional | common))}"
            )
        if self.kind == "rail-optimized":
            # the rail builder's rule (topology.builders.rail_sizing): a rail leaf holds at least
            # one scalable unit, so a node has at most radix / 2 rails (GPUs with their own NIC)
            g, radix = self.gpus_per_node or 8, self.radix or 64
            if g > radix // 2:
                raise _at(
                    "gpus_per_node",
                    f"{g} GPUs per node need {g} rail leaves of radix {radix}: a rail leaf must hold "
                    f"at least one scalable unit (allowed: at most {radix // 2} for radix {radix})",
                )
        return self

    @field_validator("k")
    @classmethod
    def _even_k(cls, k):
        if k is not None and k % 2:
            raise ValueError("fat-tree k must be even; allowed: an even integer ≥ 2")
        return k

    @property
    def link_rate_bps(self) -> int:
        return self.link_rate

    @property
    def link_delay_ps(self) -> int:
        return self.link_delay


# ---- fabric -----------------------------------------------------------------------------------
class SonicProfileSpec(_Model):
    """``fabric.pfc.sonic_profile:`` — a SONiC BUFFER_PROFILE as CONFIG_DB writes it (formats.md
    §1.5): ``dynamic_th`` n (PAUSE at 2^n × free shared buffer) or ``static_th`` (bytes), ``xoff``
    (= headroom, *not* the engine's trigger), ``xon`` / ``xon_offset`` (RESUME at or below
    max(xon, limit − xon_offset)), ``size`` (reserved bytes). Translated by :func:`aifabric.pfc.from_sonic`."""

    dynamic_th: Annotated[int, Field(ge=-8, le=7)] | None = None
    static_th: Size | None = None
    xoff: Size | None = None
    xon: Size | None = None
    xon_offset: Size | None = None
    size: Size | None = None

    @model_validator(mode="after")
    def _one_trigger(self):
        if (self.dynamic_th is None) == (self.static_th is None):
            raise ValueError("give exactly one of dynamic_th (alpha = 2^n) or static_th (bytes)")
        if self.static_th == 0:
            raise _at("static_th", "static_th 0 means no limit, so PFC would never fire; give bytes > 0")
        return self


class PfcSpec(_Model):
    """``fabric.pfc:`` — the pause trigger (static ``xoff`` bytes, or dynamic ``alpha`` × free
    shared buffer), the resume point (``xon``; dynamic: trigger − ``resume_offset``, floored at
    ``xon``), ``reserve`` (dynamic: bytes per ingress not counted against the pool) and
    ``headroom`` (documented), per ingress port and priority — or ``sonic_profile`` instead.
    Semantics and the peers' comparisons: :mod:`aifabric.pfc`."""

    enabled: bool = True
    mode: Literal["static", "dynamic"] = "static"
    xoff: Size | None = None
    xon: Size | None = None
    alpha: Annotated[float, Field(gt=0)] | None = None  # dynamic: threshold = alpha × free shared buffer
    headroom: Size | None = None
    resume_offset: Size | None = None  # dynamic: RESUME this far below the trigger (default 3 KiB, ns-3)
    reserve: Size | None = None  # dynamic: per-ingress bytes not charged to the shared pool (default 0)
    sonic_profile: SonicProfileSpec | None = None

    @model_validator(mode="after")
    def _order(self):
        if self.sonic_profile is not None:
            clash = sorted(
                self.model_fields_set
                & {"mode", "xoff", "xon", "alpha", "headroom", "resume_offset", "reserve"}
            )
            if clash:
                raise _at(
                    "sonic_profile",
                    f"give either sonic_profile or {', '.join(clash)}, not both (sonic_profile sets them)",
                )
            from aifabric.pfc import from_sonic

            sp = self.sonic_profile
            prof = from_sonic(
                {k: v for k, v in sp.model_dump().items() if v is not None}, "fabric.pfc.sonic_profile"
            )
            return self.model_copy(
                update={
                    "mode": prof.mode,
                    "xoff": prof.xoff,
                    "xon": prof.xon,
                    "alpha": prof.alpha,
                    "headroom": prof.headroom,
                    "resume_offset": prof.resume_offset,
                    "reserve": prof.reserve,
                }
            )
        if self.xoff is not None and self.xon is not None and self.xon > self.xoff:
            raise ValueError(f"xon ({self.xon} B) must not exceed xoff ({self.xoff} B)")
        if self.mode == "static" and self.alpha is not None:
            raise ValueError("alpha applies to mode: dynamic only")
        if self.mode == "static" and (self.resume_offset is not None or self.reserve is not None):
            raise ValueError("resume_offset / reserve apply to mode: dynamic only")
        return self


class EcnSpec(_Model):
    """``fabric.ecn:`` — RED marking on egress (at dequeue), Kmin/Kmax in bytes of queue."""

    enabled: bool = True
    kmin: Size | None = None
    kmax: Size | None = None
    pmax: Annotated[float, Field(ge=0, le=1)] | None = None

    @model_validator(mode="after")
    def _order(self):
        if self.kmin is not None and self.kmax is not None and self.kmin > self.kmax:
            raise ValueError(f"kmin ({self.kmin} B) must not exceed kmax ({self.kmax} B)")
        return self


class DcqcnSpec(_Model):
    """``fabric.dcqcn:`` — a preset and per-parameter overrides."""

    preset: Literal["nvidia-firmware", "paper", "ns3-mellanox"] = "ns3-mellanox"
    rate_ai: Rate | None = None
    rate_hai: Rate | None = None
    g: Annotated[float, Field(gt=0, le=1)] | None = None
    min_rate: Rate | None = None
    rate_increase_timer: PosTime | None = None
    alpha_update_timer: PosTime | None = None
    rate_decrease_interval: PosTime | None = None
    byte_counter: PosSize | None = None
    fast_recovery_stages: _count(1) | None = None
    cnp_interval: Time | None = None


class HpccSpec(_Model):
    """``fabric.hpcc:`` — η (target utilisation), maxStage, additive increase, INT bytes on the wire."""

    eta: Annotated[float, Field(gt=0, le=1)] = 0.95
    max_stage: _count(0, 64) = 5
    rate_ai: Rate | None = None
    int_bytes: Size | None = None  # INT stack per data packet and ACK (default 42 B, ns-3 HPCC)


class AdaptiveSpec(_Model):
    """``fabric.adaptive:`` — ``granularity`` is read only with the old spelling ``routing: adaptive``
    (``packet`` → ``adaptive-packet``, ``flowlet`` → ``flowlet``); ``flowlet_gap`` is the idle gap
    after which a ``flowlet`` flow may change port (10 µs: no public default; the order of the
    htsim ``-ar_sticky_delta`` / CONGA flowlet timeouts, peer-baselines.md)."""

    granularity: Literal["packet", "flowlet"] = "flowlet"
    flowlet_gap: PosTime = 10 * 10**6


# ---- routing / load-balancing modes (issue 12): one vocabulary for the packet engine, the flow
# model and compare. README "Routing modes" gives each mode's source and validation figure.
# scheduled: a cell-switched scheduled fabric (Jericho3-AI + Ramon, OCP DDC class) — RoCE only
ROUTING_MODES = ("ecmp", "flowlet", "adaptive-packet", "spray", "static", "scheduled")
# the old spelling: ``adaptive`` + ``adaptive.granularity`` (default flowlet)
LEGACY_ROUTING = ("adaptive",)
ADAPTIVE_MODES = ("flowlet", "adaptive-packet")  # switch-side choice by queue occupancy


def routing_mode(routing: str, granularity: str = "flowlet") -> str:
    """The canonical mode name of a ``routing`` value (old spelling ``adaptive`` + ``granularity``
    mapped onto ``adaptive-packet`` / ``flowlet``); unknown names raise
    :class:`~aifabric.errors.InputError`."""
    from aifabric.errors import InputError

    if routing in ROUTING_MODES:
        return routing
    if routing == "adaptive":
        return "adaptive-packet" if granularity == "packet" else "flowlet"
    raise InputError(
        "unknown routing",
        field="fabric.routing",
        value=routing,
        allowed=", ".join(ROUTING_MODES) + " (or the old spelling adaptive + adaptive.granularity)",
    )


class IbSpec(_Model):
    """``fabric.ib:`` — credit-based flow control per virtual lane."""

    vl_buffer: PosSize | None = None
    credit_bytes: PosSize = 64
    vls: _count(1, 15) = 1


class FailureSpec(_Model):
    link: str  # "nodeA-nodeB" by name or id, e.g. "agg0-core0"
    at: Time = 0


def _at(sub: str, message: str) -> ValueError:
    """An error a model validator raises about one of its fields (or a nested one): the file
    loader appends ``sub`` to the reported field path (``fabric.pause_storms.0`` + ``duration``)."""
    return ValueError(f"{message} [at {sub}]")


def _us(ps: int) -> str:
    return f"{ps / 1e6:g} us"


_AT = re.compile(r" \[at ([\w.]+)\]$")

NodeRef = _count(0) | str  # a node by id or by name (resolved against the topology)


class PfcOverrideSpec(_Model):
    """``fabric.pfc_overrides[]`` — other PFC thresholds on some switches (e.g. a second batch of
    switches with other firmware defaults). They apply to every ingress port of the listed switches:
    PFC thresholds are evaluated by the switch that receives the packets."""

    switches: Annotated[tuple[NodeRef, ...], Field(min_length=1)]
    mode: Literal["static", "dynamic"] | None = None  # default: fabric.pfc.mode
    xoff: Size | None = None  # static: PAUSE above this many bytes charged to one ingress port
    xon: Size | None = None  # static: RESUME below (default: min(the fabric's xon, xoff))
    alpha: Annotated[float, Field(gt=0)] | None = None  # dynamic: threshold = alpha × free shared buffer

    @model_validator(mode="after")
    def _order(self):
        if self.xoff is not None and self.xon is not None and self.xon > self.xoff:
            raise _at("xon", f"xon ({self.xon} B) must not exceed xoff ({self.xoff} B)")
        if self.mode == "static" and self.alpha is not None:
            raise _at("alpha", "alpha applies to mode: dynamic only")
        if self.mode == "dynamic" and (self.xoff is not None or self.xon is not None):
            raise _at("xoff" if self.xoff is not None else "xon", "xoff / xon apply to mode: static only")
        return self


class PauseStormSpec(_Model):
    """``fabric.pause_storms[]`` — a device that sends spurious PFC PAUSE frames (a flow-control
    firmware bug): its neighbours' egress ports toward it send no data for ``duration``, ``count``
    times, every ``period`` from ``start``."""

    node: NodeRef  # the device that sends the PAUSE frames (switch or host NIC)
    peers: Annotated[tuple[NodeRef, ...], Field(min_length=1)] | None = None  # default: every neighbour
    start: Time = 0
    duration: PosTime
    period: PosTime | None = None  # required when count > 1
    count: _count(1) = 1

    @model_validator(mode="after")
    def _timing(self):
        if self.count > 1 and self.period is None:
            raise _at("period", f"period is required when count > 1 (got count {self.count})")
        if self.period is not None and self.duration > self.period:
            raise _at(
                "duration", f"duration ({_us(self.duration)}) must not exceed period ({_us(self.period)})"
            )
        return self


class PfcWatchdogSpec(_Model):
    """``fabric.pfc_watchdog:`` — a queue paused without a break for ``detection`` is declared
    stormed and stops honouring PAUSE (SONiC ``pfcwd``, action drop; defaults 200 ms / 200 ms,
    hardware-facts E.2). On InfiniBand the same role is played by the switch's head-of-queue
    lifetime (OpenSM ``leaf_head_of_queue_lifetime``), so the key is allowed on both technologies.
    Applied to injected pauses (``pause_storms``, ``receiver_stalls``): a pause longer than
    ``detection`` ends at ``detection``. The dropped traffic of the stormed queue itself is not
    modelled (the stalled device is treated as draining again)."""

    enabled: bool = True
    detection: PosTime = 200 * 10**9


class NsccSpec(_Model):
    """``fabric.uet.nscc:`` — NSCC, the UET sender-based window (UEC 1.0 §3.6.13). ``base_rtt`` is
    config_base_rtt (default: the longest unloaded round trip of an MTU packet and its ACK in the
    fabric, as htsim computes it); ``target_qdelay`` defaults to 0.75 × base_rtt with trimming,
    1.0 × without (§3.6.13.3); ``gamma`` and ``max_md_jump`` shape multiplicative_decrease
    (§3.6.13.6; htsim's 0.8 and 0.5); ``quick_adapt: false`` is the spec's disable_quick_adapt."""

    base_rtt: PosTime | None = None
    target_qdelay: PosTime | None = None
    gamma: Annotated[float, Field(gt=0, le=1)] = 0.8
    max_md_jump: Annotated[float, Field(gt=0, lt=1)] = 0.5
    quick_adapt: bool = True


class UetSpec(_Model):
    """``fabric.uet:`` — the Ultra Ethernet transport's settings (``fabric.transport: uet``):
    ``trimming`` (a full switch queue forwards a ``trim_size`` header at high priority instead of
    dropping), ``ev_count`` (entropy values a sender sprays its packets over), ``queue_limit`` (bytes
    an egress queue holds before it trims or drops; default 1 × BDP with trimming, 5 × BDP without,
    htsim's sizing), ``rto`` (retransmission timeout; default htsim's 15 µs + 6 queue drain times)
    and ``nscc``; ``load_balancer`` (how a sender picks entropy values: ``mixed``, the UEC htsim's
    default, recycles EVs that came back clean and skips EVs that came back ECN-marked, trimmed or
    lost; ``bitmap`` only skips; ``reps`` only recycles; ``oblivious`` ignores the feedback) and
    ``delivery`` (``rud`` reliable unordered; ``rod`` reliable ordered: one entropy value per flow,
    the receiver discards out-of-sequence packets, the sender goes back to the lost one) and
    ``cbfc`` (credit-based flow control on every link: lossless, a port sends only into buffer its
    peer granted; the engine's InfiniBand credit machinery). Sources: docs/ultra-ethernet.md."""

    trimming: bool = True
    trim_size: Annotated[int, _unit(parse_size, bare_ok=True), Field(ge=64, le=4096)] = 64
    ev_count: _count(1, 65536) = 64
    queue_limit: PosSize | None = None
    rto: PosTime | None = None
    nscc: NsccSpec = NsccSpec()
    load_balancer: Literal["oblivious", "bitmap", "reps", "mixed"] = "mixed"
    delivery: Literal["rud", "rod"] = "rud"
    cbfc: bool = False

    @model_validator(mode="before")
    @classmethod
    def _rod_one_ev(cls, data):
        """Ordered delivery keeps a flow on one path: ``ev_count`` defaults to 1 with it."""
        if isinstance(data, dict) and data.get("delivery") == "rod" and "ev_count" not in data:
            return {**data, "ev_count": 1}
        return data

    @model_validator(mode="after")
    def _modes(self):
        if self.delivery == "rod" and self.ev_count != 1:
            raise _at(
                "ev_count",
                f"delivery rod delivers in order, so a flow keeps one path; allowed with rod: 1 (got {self.ev_count})",
            )
        if self.load_balancer != "oblivious" and self.ev_count > 1024:
            raise _at(
                "ev_count",
                f"load_balancer {self.load_balancer} keeps state per entropy value; allowed: 1 to 1024 "
                f"(or load_balancer: oblivious), got {self.ev_count}",
            )
        return self


class LinkErrorsSpec(_Model):
    """``fabric.link_errors:`` — ``fer``, the probability that a data frame arrives at a port with
    a bad FCS (post-FEC frame error rate, the same on every link; 0: no errors, the engine unchanged).
    The receiving port discards it and the transport recovers it end to end (RoCE and InfiniBand
    go-back-N, UET selective retransmission), unless ``llr: true``: link-level retry — the link
    sender replays the frame after the link's round trip plus ``llr_replay_delay`` (Ethernet: UEC
    1.0 link layer; InfiniBand: NVIDIA's Link Level Retransmission, MLNX-OS manual, NVIDIA-to-NVIDIA
    ports on cables up to 30 m). ``links``: ``all`` (default) or ``switch``, only the links between
    two switches. Sources and simplifications: docs/ultra-ethernet.md."""

    fer: Annotated[float, Field(ge=0, lt=0.1)] = 0.0
    llr: bool = False
    llr_replay_delay: Time = 100_000
    links: Literal["all", "switch"] = "all"


TRANSPORTS = ("rc", "uet")
# UET congestion control: NSCC (sender window, UEC 1.0 §3.6.13), RCCC (receiver credits, CMS) or both
UET_CCS = ("nscc", "rccc", "nscc-rccc")


def _uet_defaults(data: dict) -> dict:
    """``transport: uet`` changes three defaults the file may override: lossy (``pfc.enabled:
    false``), ECN marking on (NSCC's signal; thresholds from the BDP in the engine) and
    ``congestion_control: nscc``."""
    if data.get("transport") != "uet":
        return data
    out = {"pfc": {"enabled": False}, "ecn": {"enabled": True}, "congestion_control": "nscc", **data}
    if isinstance(out["ecn"], dict) and "enabled" not in out["ecn"]:
        out["ecn"] = {"enabled": True, **out["ecn"]}
    return out


# fabric.preset → the keys it sets unless the file sets them. spectrum-x: Spectrum-4 switches with
# per-packet adaptive routing and a BlueField-3 SuperNIC that places out-of-order packets
# (hardware-facts A.3, S35/S36), and its telemetry-based congestion control — unpublished, so HPCC
# (the public in-band-telemetry CC) stands for it.
FABRIC_PRESETS = {"spectrum-x": {"routing": "adaptive-packet", "congestion_control": "hpcc"}}


class FabricSpec(_Model):
    """``fabric:`` — technology and its lossless / congestion / routing settings."""

    preset: Literal["spectrum-x"] | None = None  # FABRIC_PRESETS: RoCE only
    technology: Literal["roce", "infiniband"] = "roce"
    # rc: the technology's RDMA reliable connection (go-back-N); uet: Ultra Ethernet (aifabric.sim.uet)
    transport: Literal["rc", "uet"] = "rc"
    uet: UetSpec = UetSpec()
    mtu: Mtu | None = None
    header: Size | None = None
    switch_latency: Time = 0
    switch_buffer: PosSize | None = None
    # the host NIC: the fraction of line rate its egress achieves (1: ideal; `simulate
    # --calibration` sets it from a fitted nic_efficiency) and the latency it adds each time a
    # packet leaves or enters it (on the host link, both directions; default 0)
    nic_efficiency: Annotated[float, Field(gt=0, le=1)] | None = None
    nic_latency: Time = 0
    pfc: PfcSpec = PfcSpec()
    ecn: EcnSpec = EcnSpec(enabled=False)
    congestion_control: Literal["none", "dcqcn", "hpcc", "ib-cc", "nscc", "rccc", "nscc-rccc"] = "none"
    dcqcn: DcqcnSpec = DcqcnSpec()
    hpcc: HpccSpec = HpccSpec()
    # ecmp | flowlet | adaptive-packet | spray | static | scheduled, or the old spelling adaptive
    # (+ adaptive.granularity); default ecmp on RoCE, adaptive-packet on InfiniBand (set by _preset
    # when the file gives none)
    routing: Literal["ecmp", "flowlet", "adaptive-packet", "spray", "static", "scheduled", "adaptive"] = (
        "ecmp"
    )
    # per-switch: every switch salts its ECMP hash with its own seed; same-seed: one seed on every
    # switch (ECMP polarisation: the tier above repeats the choice of the tier below)
    ecmp_hash: Literal["per-switch", "same-seed"] = "per-switch"
    adaptive: AdaptiveSpec = AdaptiveSpec()
    qp_split: _count(1, 1024) = 1
    ib: IbSpec = IbSpec()
    failures: tuple[FailureSpec, ...] = ()
    pfc_overrides: tuple[PfcOverrideSpec, ...] = ()
    pause_storms: tuple[PauseStormSpec, ...] = ()
    # a host NIC that stops draining (slow or stuck receiver): on RoCE it sends PAUSE to its leaf,
    # on InfiniBand it withholds credits — both stop the leaf's egress toward it for ``duration``
    receiver_stalls: tuple[PauseStormSpec, ...] = ()
    pfc_watchdog: PfcWatchdogSpec | None = None
    link_errors: LinkErrorsSpec = LinkErrorsSpec()

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data):
        if isinstance(data, dict) and data.get("preset") in FABRIC_PRESETS:
            data = {**FABRIC_PRESETS[data["preset"]], **data}
        # interface.md: routing defaults to adaptive-packet on InfiniBand (AR as deployed on AI
        # clusters, README "Routing modes"), ecmp on RoCE
        if isinstance(data, dict) and data.get("technology") == "infiniband" and "routing" not in data:
            data = {**data, "routing": "adaptive-packet"}
        return _uet_defaults(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _technology(self):
        if self.preset is not None and self.technology != "roce":
            raise _at(
                "preset", f"preset {self.preset} is a RoCE (Ethernet) preset; allowed for infiniband: none"
            )
        self._check_transport()
        if self.congestion_control == "ib-cc":
            if self.technology != "infiniband":
                raise ValueError(
                    "congestion_control ib-cc is InfiniBand's; allowed for roce: none, dcqcn, hpcc"
                )
            if not self.ecn.enabled:
                raise ValueError("congestion_control ib-cc needs ecn.enabled: true (FECN marking thresholds)")
        if self.technology == "infiniband":
            if self.routing == "scheduled":
                raise _at(
                    "routing",
                    "scheduled (a cell-switched VOQ fabric: Jericho3-AI + Ramon, OCP DDC) is an "
                    "Ethernet fabric; allowed for infiniband: adaptive-packet, static, flowlet, spray",
                )
            if self.congestion_control == "dcqcn":
                raise ValueError(
                    "congestion_control dcqcn is a RoCE mechanism; allowed for infiniband: none, hpcc, ib-cc"
                )
            if "pfc" in self.model_fields_set and self.pfc.enabled:
                raise ValueError("pfc is a RoCE mechanism; InfiniBand uses credit flow control (fabric.ib)")
            if self.pfc_overrides:
                raise _at(
                    "pfc_overrides",
                    "PFC thresholds are a RoCE mechanism; InfiniBand uses credit flow control (fabric.ib)",
                )
            if self.pause_storms:
                raise _at(
                    "pause_storms",
                    "InfiniBand has no PAUSE frames (credit flow control); allowed: technology roce",
                )
        elif self.pfc_overrides and not self.pfc.enabled:
            raise _at("pfc_overrides", "PFC thresholds need fabric.pfc.enabled: true")
        for i, o in enumerate(self.pfc_overrides):
            mode = o.mode or self.pfc.mode
            if mode == "static" and o.alpha is not None:
                raise _at(
                    f"pfc_overrides.{i}.alpha",
                    f"alpha applies to mode: dynamic only (this override's mode "
                    f"is {mode}, the fabric's pfc.mode unless given)",
                )
            if mode == "dynamic" and (o.xoff is not None or o.xon is not None):
                raise _at(
                    f"pfc_overrides.{i}.{'xoff' if o.xoff is not None else 'xon'}",
                    f"xoff / xon apply to mode: static only (this override's mode is {mode}, the "
                    f"fabric's pfc.mode unless given)",
                )
            if mode == "static" and o.xon is not None and o.xoff is None:
                xoff = self.pfc.xoff if self.pfc.xoff is not None else int(default("pfc.xoff_bytes"))
                if o.xon > xoff:
                    raise _at(
                        f"pfc_overrides.{i}.xon",
                        f"xon ({o.xon} B) must not exceed xoff ({xoff} B, the "
                        f"fabric's, as the override gives none)",
                    )
        if self.header_bytes >= self.mtu_bytes:
            raise _at(
                "header",
                f"a header of {self.header_bytes} B is not smaller than the MTU ({self.mtu_bytes} B "
                f"payload): no packet carries data (allowed: header < mtu; RoCEv2 62 B, IB 26 B)",
            )
        if self.congestion_control == "dcqcn" and not self.ecn.enabled:
            raise ValueError("congestion_control dcqcn needs ecn.enabled: true (DCQCN reacts to ECN marks)")
        if (
            self.routing in ADAPTIVE_MODES
            and "granularity" in self.adaptive.model_fields_set
            and self.adaptive.granularity
            != {"adaptive-packet": "packet", "flowlet": "flowlet"}.get(self.routing)
        ):
            raise _at(
                "adaptive.granularity",
                f"granularity applies to the old spelling routing: adaptive only; routing {self.routing} "
                f"names its own granularity (allowed: remove it, or routing: adaptive)",
            )
        return self

    def _check_transport(self) -> None:
        """``transport: uet`` runs on Ethernet, with NSCC (or none) and ECMP hashing of its entropy
        values; NSCC and ``fabric.uet`` belong to it."""
        if self.transport != "uet":
            if self.congestion_control in UET_CCS:
                raise _at(
                    "congestion_control",
                    f"{self.congestion_control} is the Ultra Ethernet transport's; needs transport: uet",
                )
            if "uet" in self.model_fields_set:
                raise _at("uet", "applies to transport: uet only (allowed: remove it, or transport: uet)")
            return
        if self.technology != "roce":
            raise _at("transport", "uet runs on Ethernet switches; allowed with technology: roce (Ethernet)")
        if self.congestion_control not in (*UET_CCS, "none"):
            raise _at(
                "congestion_control",
                f"{self.congestion_control} is not a UET congestion control; allowed for transport uet: nscc, rccc, nscc-rccc, none",
            )
        if self.routing != "ecmp":
            raise _at(
                "routing",
                f"transport uet sprays packets by entropy value over the switches' ECMP hash; "
                f"allowed for transport uet: ecmp (got {self.routing})",
            )
        if self.qp_split != 1:
            raise _at("qp_split", "queue pairs are RDMA's; transport uet sprays one flow itself (allowed: 1)")
        if self.uet.cbfc and self.pfc.enabled:
            raise _at(
                "uet.cbfc",
                "credit-based flow control and PFC are two ways to make the fabric lossless; "
                "allowed: cbfc: true with pfc.enabled: false, or cbfc: false",
            )
        if "rccc" in self.congestion_control and not self.uet.trimming:
            raise _at(
                "uet.trimming",
                f"congestion_control {self.congestion_control} learns of a lost packet from its trimmed "
                f"header (the receiver owes it credit); allowed with rccc: true",
            )

    @property
    def routing_mode(self) -> str:
        """The canonical routing mode (:data:`ROUTING_MODES`): ``adaptive`` mapped by granularity."""
        return routing_mode(self.routing, self.adaptive.granularity)

    @property
    def mtu_bytes(self) -> int:
        return self.mtu if self.mtu is not None else default("mtu_bytes")

    @property
    def header_bytes(self) -> int:
        return self.header if self.header is not None else default(f"{self.technology}.header_bytes")

    @property
    def switch_latency_ps(self) -> int:
        return self.switch_latency

    @property
    def switch_buffer_bytes(self) -> int:
        return self.switch_buffer if self.switch_buffer is not None else default("switch_buffer_bytes")

    @property
    def lossless(self) -> bool:
        return self.technology == "infiniband" or self.pfc.enabled


# ---- workload ---------------------------------------------------------------------------------
WORKLOAD_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "permutation": (set(), {"flow_size", "hosts", "start"}),
    "incast": ({"senders"}, {"receiver", "flow_size", "start"}),
    "all-to-all": (set(), {"flow_size", "hosts", "start"}),
    "flows-file": ({"path"}, {"format"}),
    "poisson": ({"load", "cdf", "duration"}, {"hosts"}),
    "collective": ({"op", "size"}, {"algorithm", "hosts"}),
}


class WorkloadSpec(_Model):
    """``workload:`` — traffic. Flow sizes in bytes; ``start`` is when all flows begin."""

    kind: Literal["permutation", "incast", "all-to-all", "flows-file", "poisson", "collective"]
    senders: _count(1) | None = None
    receiver: _count(0) | None = None
    flow_size: PosSize | None = None
    hosts: _count(2) | None = None
    start: Time | None = None
    path: str | None = None
    format: Literal["auto", "hpcc", "htsim"] | None = None
    load: Annotated[float, Field(gt=0, le=1)] | None = None
    cdf: str | None = None
    duration: PosTime | None = None
    op: Literal["all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast"] | None = None
    size: PosSize | None = None
    algorithm: Literal["ring", "tree", "nvls", "nvls-tree"] | None = None

    @model_validator(mode="after")
    def _per_kind(self):
        required, optional = WORKLOAD_FIELDS[self.kind]
        given = {f for f in type(self).model_fields if f != "kind" and getattr(self, f) is not None}
        missing = sorted(required - given)
        extra = sorted(given - required - optional)
        if missing:
            raise ValueError(f"kind {self.kind} needs {', '.join(missing)}")
        if extra:
            raise ValueError(
                f"{', '.join(extra)} not used by kind {self.kind}; "
                f"allowed: {', '.join(sorted(required | optional | {'kind'}))}"
            )
        return self

    @property
    def flow_size_bytes(self) -> int:
        return self.flow_size if self.flow_size is not None else 2_000_000


class SimSpec(_Model):
    """``sim:`` — how long and how."""

    until: PosTime = 10**12  # 1 s of simulated time at most
    mode: Literal["packet", "flow"] = "packet"
    deadlock_timeout: PosTime = 10**9  # 1 ms with packets queued and nothing moving
    progress: bool = True
    # packet engine: stop after this many events (a run that hits it is incomplete, exit 1);
    # 10^9 events is several minutes of wall time (perm1024: 9 M events in 5 s on one core)
    max_events: _count(1, 10**15) = DEFAULT_MAX_EVENTS

    @property
    def until_ps(self) -> int:
        return self.until


class AdvisorSpec(_Model):
    """``advisor:`` — the questions ``aifabric compare`` asks (interface.md)."""

    gpus: _count(1) = 1024
    gpu: Literal["h100", "h200", "b200", "h800", "b300", "gb200-nvl72", "gb300-nvl72"] = "h100"
    workload: Literal["training", "inference", "storage", "trading"] = "training"
    model: str | None = None
    jitter_sensitivity: Literal["low", "medium", "high"] = "medium"
    team_expertise: Literal["none", "some", "expert"] = "some"
    budget: Literal["low", "medium", "high"] = "medium"
    growth: Literal["none", "2x", "10x"] = "none"
    # ecmp (NCCL's RoCE default), adaptive-packet / spectrum-x (per-packet AR with a reordering
    # NIC; spectrum-x also sets the RoCE congestion control baseline), or the old spelling adaptive
    roce_routing: Literal["ecmp", "adaptive", "adaptive-packet", "flowlet", "spectrum-x"] = "ecmp"
    # adaptive-packet: AR as deployed on AI clusters (UFM/SuperPOD); static: a plain OpenSM's LFT
    ib_routing: Literal["adaptive-packet", "static"] = "adaptive-packet"
    # where the job's ranks land (aifabric.workload.placement): ideal | fragmented | shared
    placement: Literal["ideal", "fragmented", "shared"] = "ideal"
    occupancy: Annotated[float, Field(ge=0, lt=1)] | None = None  # share of nodes other jobs hold (0.5)
    background_jobs: _count(1) | None = None  # shared: how many other jobs run on those nodes (4)
    # ECMP entropy the job's traffic carries: each NIC-to-NIC connection is channels × QPs flows
    channels_per_nic: _count(1, 64) = 2  # NCCL channels per network peer (2 in NCCL 2.28, paths.cc)
    qps_per_connection: _count(1, 64) = 1  # NCCL_IB_QPS_PER_CONNECTION (NCCL's default 1, S15)
    network_budget_usd: Annotated[float, Field(gt=0)] | None = None  # ceiling on network capex (a constraint)
    # tail-latency constraint (trading / high jitter sensitivity): a design's p99 collective step time
    # on the packet engine may be at most this fraction above the best design's (None: 0.25, an assumption)
    p99_budget: Annotated[float, Field(gt=0)] | None = None
    # where storage / checkpoint traffic runs (aifabric.stages.deployment): separate (the reference
    # designs' own storage network, the default) | on-fabric (shares the compute fabric)
    storage_placement: Literal["separate", "on-fabric"] | None = None
    # both fabrics as shipped (default) or both tuned (aifabric.stages.deployment.TUNING_SOURCE)
    tuning: Literal["as-shipped", "tuned"] | None = None
    # The buyer's options (issue 14), as ``aifabric plan`` has them; each defaults to the GPU
    # system's reference design, so leaving them out keeps the default comparison.
    designs: list[str] | None = None  # named designs side by side (aifabric.design.plan.DESIGNS)
    switch: list[str] | None = None  # catalog switch ids; each applies to the fabric of its technology
    nic: list[str] | None = None  # catalog NIC ids; likewise
    nic_rate_gbps: Annotated[float, Field(gt=0)] | None = None  # per-GPU scale-out rate
    planes: _count(1, 16) | None = None  # e.g. 2: an 800G NIC as 2 × 400G planes
    rail_only: bool = False  # no spine between rails (S97)
    max_tiers: Literal[1, 2, 3] = 3
    oversubscription: Annotated[float, Field(ge=1, le=64)] = 1.0  # leaf down:up
    lengths_m: (
        dict[Literal["host-leaf", "leaf-spine", "spine-core"], Annotated[float, Field(gt=0)]] | None
    ) = None
    hall_size_m: Annotated[float, Field(gt=0)] | None = None  # square data hall: switch runs = 2 × side
    # host-link media imposed on every fabric (aifabric.design.cost.HOST_LINK_MEDIA); auto = the
    # cheapest part that reaches, from one media table and one rule for both protocols
    host_link_media: Literal["auto", "dac", "acc", "aec", "aoc", "optics"] = "auto"
    lossy_roce: bool = False  # RoCE without PFC, NIC retransmission (also the "plain Ethernet" option)
    storage_nodes: _count(0) | None = None  # hybrid: Ethernet front-end/storage network priced in
    checkpoint_gbytes_per_s: Annotated[float, Field(ge=0)] | None = None  # hybrid: storage sized for it
    dual_tor: bool = False  # RoCE: each NIC's legs on two leaves (aifabric.design.redundancy); not on IB
    spine_spares: _count(0, 64) = 0  # spines per plane beyond the non-blocking count (2-tier)


class RiskSpec(_Model):
    """``risk:`` — the fabric as the user intends to run it, and any rate or duration of the risk
    library (:mod:`aifabric.stages.risk.assess`) replaced by the user's own."""

    roce_baseline: Literal["dcqcn-vendor", "hpcc", "dcqcn", "pfc-only"] | None = None
    ib_congestion_control: Literal["none", "ib-cc"] | None = None
    audit_in_ci: bool = False  # the audit runs in CI: a wrong setting is found in about a day
    check_scaling: bool = False  # also measure a pod twice as wide; the larger slowdown counts
    # scenario -> probability (mistakes), events per 1,000 components a year (faults) or share of time
    probability: dict[str, Annotated[float, Field(ge=0)]] = {}
    hours: dict[str, Annotated[float, Field(ge=0)]] = {}  # scenario -> hours present per event (faults)
    interrupt_hours: Annotated[float, Field(gt=0)] | None = None  # lost per job interruption
    # value leaf / spine switch failures for every fabric (stages/risk/redundancy); on by itself when a
    # design asks for dual-ToR or spine spares, so a default comparison is unchanged
    switch_failures: bool = False


class InferenceSection(_Model):
    """``inference:`` — the serving setup ``compare --workload inference`` times on each fabric
    (:mod:`aifabric.workload.llm.inference`). Keys left out take the defaults there; the latency
    budgets default to MLPerf Inference v5.0's Llama2-70B-Interactive bounds (p99 TTFT ≤ 450 ms,
    TPOT ≤ 40 ms, https://mlcommons.org/2025/04/llm-inference-v5/)."""

    model: str | None = None  # a built-in model name (else advisor.model, else llama3.1-70b)
    precision: Literal["bf16", "fp8"] | None = None
    prompt_tokens: _count(1, 2**21) | None = None
    output_tokens: _count(1, 2**21) | None = None
    batch: _count(1, 2**20) | None = None  # concurrent sequences per decode instance (the most allowed)
    ttft_ms: Annotated[float, Field(gt=0)] | None = None
    itl_ms: Annotated[float, Field(gt=0)] | None = None
    disaggregated: bool | None = None  # prefill and decode on different instances (KV cache crosses)
    gpus_per_instance: _count(1, 2**20) | None = None  # else the fewest (power of two) that hold it
    overlap: bool | None = None  # two-batch overlap hides the expert all-to-all behind compute


class StorageSection(_Model):
    """``storage:`` — the storage traffic ``compare --workload storage`` puts on the network
    (:mod:`aifabric.workload.llm.storage`): checkpoints of ``model`` every ``checkpoint_period_s``
    to ``storage_nodes`` nodes, and data loading; on the back-end fabric only with ``on_backend``."""

    model: str | None = None
    checkpoint_period_s: Annotated[float, Field(gt=0)] | None = None
    storage_nodes: _count(1) | None = None
    storage_node_gbps: Annotated[float, Field(gt=0)] | None = None  # network ports of one storage node
    on_backend: bool | None = None
    bytes_per_token: Annotated[float, Field(gt=0)] | None = None


class Scenario(_Model):
    """A whole scenario file."""

    name: str = "scenario"
    seed: _count(0, 2**63 - 1) = 1
    topology: TopologySpec | None = None
    fabric: FabricSpec = FabricSpec()
    workload: WorkloadSpec | None = None
    sim: SimSpec = SimSpec()
    advisor: AdvisorSpec | None = None
    # ``training:`` (interface.md): validated by the workload stage's TrainingSpec
    # (aifabric.workload.llm.spec) — a layer above this module; kept as the parsed mapping here.
    training: dict[str, Any] | None = None
    risk: RiskSpec | None = None
    inference: InferenceSection | None = None
    storage: StorageSection | None = None
    # ``assumptions:`` — register entries the user sets (name -> value), checked by
    # aifabric.stages.deployment.check_overrides (a layer above this module)
    assumptions: dict[str, Any] | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _cross(self):
        if self.workload is not None and self.topology is None:
            raise ValueError("a workload needs a topology")
        if self.fabric.transport == "uet" and self.sim.mode != "packet":
            raise _at("sim.mode", "fabric.transport uet runs in the packet engine only; allowed: packet")
        return self


# ---- loading and error messages -------------------------------------------------------------
def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str] | None:
    """Field names allowed at ``loc`` (the parent of an unknown key)."""
    cur: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(cur, type) and issubclass(cur, BaseModel)):
            return None
        field = cur.model_fields.get(part)
        if field is None:
            return None
        cur = _model_of(field.annotation)
    if isinstance(cur, type) and issubclass(cur, BaseModel):
        return sorted(cur.model_fields)
    return None


def _model_of(annotation):
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        m = _model_of(arg)
        if m is not None:
            return m
    return None


def _errors_from_validation(
    exc: ValidationError, file: str | None, model: type[BaseModel]
) -> list[InputError]:
    out = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        path = ".".join(str(p) for p in loc) or "(top level)"
        etype = err["type"]
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        value = err.get("input")
        m = _AT.search(msg)
        if m:  # a model validator naming one of its fields
            msg = msg[: m.start()]
            path = f"{path}.{m.group(1)}" if loc else m.group(1)
            value = None
        if etype == "extra_forbidden":
            allowed = _allowed_keys(model, loc[:-1])
            out.append(
                InputError(
                    "unknown key", file=file, field=path, allowed=", ".join(allowed) if allowed else None
                )
            )
            continue
        if etype == "missing":
            out.append(InputError("required key missing", file=file, field=path))
            continue
        if etype == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            out.append(
                InputError(
                    "not an allowed value",
                    file=file,
                    field=path,
                    value=value,
                    allowed=expected.replace("'", ""),
                )
            )
            continue
        if etype in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            out.append(InputError(msg.lower(), file=file, field=path, value=value))
            continue
        shown = value if isinstance(value, str | int | float | bool) else None
        if "; allowed: " in msg:
            problem, allowed = msg.split("; allowed: ", 1)
            out.append(
                InputError(
                    problem,
                    file=file,
                    field=path,
                    value=None if "cannot read" in problem else shown,
                    allowed=allowed,
                )
            )
            continue
        out.append(InputError(msg, file=file, field=path, value=shown))
    return out


_SHOWN_KEYS = 3  # unknown keys named in one line before "and N more"


def _collapse_unknown(errors: list[InputError]) -> list[InputError]:
    """Unknown keys of one mapping as one line once there are more than a few: the first
    :data:`_SHOWN_KEYS` names and a count (a file with thousands of stray keys is one line)."""

    def parent(e: InputError) -> tuple:
        return (e.file, (e.field or "").rpartition(".")[0])

    groups: dict[tuple, list[InputError]] = {}
    for e in errors:
        if e.problem == "unknown key":
            groups.setdefault(parent(e), []).append(e)
    out, done = [], set()
    for e in errors:
        group = groups.get(parent(e)) if e.problem == "unknown key" else None
        if not group or len(group) <= _SHOWN_KEYS:
            out.append(e)
            continue
        if parent(e) in done:
            continue
        done.add(parent(e))
        names = [(g.field or "").rpartition(".")[2] for g in group]
        out.append(
            InputError(
                f"unknown keys {', '.join(names[:_SHOWN_KEYS])} (and {len(names) - _SHOWN_KEYS:,} more)",
                file=e.file,
                field=parent(e)[1] or "(top level)",
                allowed=e.allowed,
            )
        )
    return out


def validation_errors(
    exc: ValidationError, file: str | None, model: type[BaseModel], prefix: str = ""
) -> InputErrors:
    """A pydantic ValidationError of ``model`` as one-line InputErrors (fields prefixed by ``prefix``)."""
    out = []
    for raw, e in zip(exc.errors(), _errors_from_validation(exc, file, model), strict=True):
        inner = (raw.get("ctx") or {}).get("error")
        if isinstance(inner, InputError):  # a validator's own one-line error: keep its field and words
            field = inner.field if (inner.field or "").startswith(prefix) else f"{prefix}.{inner.field or ''}"
            out.append(
                InputError(
                    inner.problem,
                    file=file,
                    field=field.rstrip("."),
                    value=inner.value,
                    allowed=inner.allowed,
                )
            )
            continue
        field = (
            f"{prefix}.{e.field}" if prefix and e.field and e.field != "(top level)" else (prefix or e.field)
        )
        out.append(InputError(e.problem, file=e.file, field=field, value=e.value, allowed=e.allowed))
    return InputErrors(_collapse_unknown(out))


def scenario_from_dict(data: Any, file: str | None = None) -> Scenario:
    """Validate a parsed YAML mapping; raises :class:`InputErrors` listing every problem."""
    if not isinstance(data, dict):
        raise InputErrors(
            [
                InputError(
                    "a scenario must be a YAML mapping",
                    file=file,
                    field="(top level)",
                    allowed="keys name, seed, topology, fabric, workload, sim, advisor",
                )
            ]
        )
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise InputErrors(_collapse_unknown(_errors_from_validation(exc, file, Scenario))) from None


class DuplicateKeyError(yaml.YAMLError):
    """A mapping names the same key twice (PyYAML would silently keep the later value)."""

    def __init__(self, key: object, line: int, first_line: int) -> None:
        self.key, self.line, self.first_line = key, line, first_line
        super().__init__(f"duplicate key {key!r} at line {line} (first at line {first_line})")


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects duplicate keys in a mapping."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    continue  # SafeLoader reports unhashable keys itself
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKeyError(key, line, seen[key])
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, file: str | None = None) -> Any:
    """``yaml.safe_load`` that raises :class:`DuplicateKeyError` for a key given twice, within
    :mod:`aifabric.yamlsafe`'s depth, key and size caps (an InputError naming ``file``)."""
    from aifabric import yamlsafe

    return yamlsafe.load(text, file, _StrictLoader)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario YAML file. Relative ``path:`` entries inside it are resolved
    against the file's folder."""
    from aifabric.memory import read_text

    p = Path(path)
    try:
        text = read_text(p, "scenario file", bytes_per_byte=100)
    except InputError as exc:
        raise InputErrors([exc]) from None
    try:
        data = load_yaml(text, str(path))
    except InputError as exc:
        raise InputErrors([exc]) from None
    except DuplicateKeyError as exc:
        raise InputErrors(
            [
                InputError(
                    f"duplicate key {exc.key!r} (first at line {exc.first_line})",
                    file=str(path),
                    field=f"line {exc.line}",
                    allowed="each key once per mapping",
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise InputErrors(
            [InputError(f"YAML syntax error: {problem}", file=str(path), field=where)]
        ) from None
    data = _resolve_paths(data, p.parent)
    return scenario_from_dict(data, file=str(path))


def _resolve_paths(data: Any, base: Path) -> Any:
    if not isinstance(data, dict):
        return data
    data = dict(data)
    for section in ("topology", "workload"):
        sec = data.get(section)
        if isinstance(sec, dict) and isinstance(sec.get("path"), str) and not Path(sec["path"]).is_absolute():
            sec = dict(sec)
            candidate = base / sec["path"]
            sec["path"] = str(candidate)
            data[section] = sec
    wl = data.get("workload")
    if isinstance(wl, dict) and isinstance(wl.get("cdf"), str) and not Path(wl["cdf"]).is_absolute():
        candidate = base / wl["cdf"]
        if candidate.is_file():  # a CDF file next to the scenario (else a shipped name, or cwd)
            data["workload"] = {**wl, "cdf": str(candidate)}
    return data

"""One PFC vocabulary for the packet engine, the scenario and the audit.

Three numbers describe a lossless priority group (PG) on a switch ingress port, and the engine,
the peers and SONiC spell them differently:

=================  ===================================  =====================================
concept            engine / scenario (``fabric.pfc``)   SONiC ``BUFFER_PROFILE`` (formats.md §1.5)
=================  ===================================  =====================================
pause trigger      static: ``xoff`` (bytes charged to   ``dynamic_th`` n: PAUSE when the PG's
                   the ingress); dynamic: ``alpha`` ×   shared use reaches 2^n × the free
                   free shared buffer                   shared pool (``static_th``: bytes)
headroom           ``headroom`` (documented; the        ``xoff``: the bytes the PG may still
                   engine never drops a lossless        take *after* PAUSE (cable round trip,
                   packet while the buffer has room)    MTUs, the peer's response)
resume             static: ``xon``; dynamic: trigger −  ``xon`` / ``xon_offset``: RESUME when
                   ``resume_offset`` (floor ``xon``)    usage ≤ max(xon, limit − xon_offset)
reserved           ``reserve`` (dynamic: bytes not      ``size``: the PG's guaranteed buffer
                   counted against the shared pool)
=================  ===================================  =====================================

So SONiC's ``xoff`` is *not* the engine's ``xoff``: SONiC's is headroom, the engine's is the
static pause trigger. :func:`from_sonic` / :func:`to_sonic` translate; ``fabric.pfc.sonic_profile``
takes a SONiC profile as it is written.

Trigger and resume comparisons, as the peers run them (read from their code):

* **htsim** (Broadcom/csg-htsim @841d9e7, ``sim/queue_lossless_input.cpp`` lines 63-104): the
  ingress adds the packet first (``_queuesize += pkt.size()``, l. 66), then PAUSEs when
  ``_queuesize > _high_threshold`` (l. 70); on dequeue it RESUMEs when
  ``_queuesize < _low_threshold`` (l. 100). The thresholds are counted in *payload* MTUs:
  ``_high_threshold = Packet::data_packet_size() * high_pfc`` (``sim/datacenter/main_roce.cpp``
  l. 304-305, high 15 / low 12 by default, l. 69), while ``pkt.size()`` is payload + 64 B
  (``sim/rocepacket.h`` l. 28, ``ACKSIZE`` 64). With 4000 B payloads the trigger is 60,000 B, so
  the 15th 4,064 B packet (60,960 B charged) sends PAUSE. The engine's static mode is the same
  rule (add, then ``>`` xoff; ``<`` xon) — :func:`static_trigger_packets` gives the packet count.
* **ns-3 HPCC** (alibaba-edu/High-Precision-Congestion-Control @9f4be2a,
  ``simulation/src/point-to-point/model/switch-mmu.cc``): admission adds the packet
  (``UpdateIngressAdmission``, l. 49-62; ``switch-node.cc`` l. 124-130 calls it, then
  ``CheckAndSendPfc``); PAUSE when ``shared_used >= threshold`` (l. 77) with
  ``shared_used = ingress_bytes − reserve`` (l. 95-98, ``reserve`` 4 KiB per port, l. 26) and
  ``threshold = (buffer − Σheadroom − Σreserve − shared_used_bytes) >> pfc_a_shift`` (l. 93;
  shift 3, α = 1/8 at the NIC rate: ``scratch/third.cc`` l. 839-843); RESUME when the headroom
  is empty and ``shared_used == 0 or shared_used + resume_offset <= threshold`` (l. 83,
  ``resume_offset`` 3 KiB, l. 27). Per-port headroom is ``3 × rate × link delay``
  (``third.cc`` l. 836). The engine's dynamic mode uses the same comparisons (``>=`` to pause,
  ``<=`` to resume) and ``reserve``; its free pool is ``switch_buffer`` − all bytes the switch
  holds (ns-3 also carves Σheadroom + Σreserve out first: 0.3 MB of 32 MB on a k = 8 switch).
* **SONiC / SAI** (formats.md §1.5): ``dynamic_th`` n means α = 2^n (YANG range −8..7);
  ``xoff`` is headroom; XON when usage ≤ max(xon, limit − xon_offset).

Headroom physics (shared with the audit, :mod:`aifabric.audit.headroom`): after a PAUSE leaves,
the port still receives the cable round trip at line rate, the frame the peer is sending, the
frame the switch was sending when XOFF was due, and the peer's response time
(:func:`headroom_floor`; hardware-facts.md §E.1 steps 1-5 without the cell and pipeline terms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from aifabric.errors import InputError

# hardware-facts §E.1 step 2: signal speed in the cable, m/s.
SPEED_OF_LIGHT_M_S = 1.98e8
# The smallest PFC response a SONiC ASIC table assumes (peer_response_time 3.8 KiB, §E.1).
PFC_RESPONSE_BYTES = int(3.8 * 1024)
ROCE_FRAME_BYTES = 4200  # the largest RoCE frame: 4096-byte payload + headers (hardware-facts §E.3)
DEFAULT_PORT_MTU = 9100  # SONiC default PORT.mtu (formats.md §1.1)
DYNAMIC_TH_RANGE = (-8, 7)  # SONiC YANG range of dynamic_th (formats.md §1.5)
# ns-3 HPCC switch-mmu.cc l. 26-27: per-port reserve and the dynamic RESUME offset.
NS3_RESERVE_BYTES = 4 * 1024
NS3_RESUME_OFFSET_BYTES = 3 * 1024


@dataclass(frozen=True)
class PfcProfile:
    """A lossless PG's PFC setting in the engine's terms (bytes; ``alpha`` a fraction).

    ``mode`` static: PAUSE when the ingress holds more than ``xoff`` after the arriving packet is
    added, RESUME when it holds less than ``xon``. ``mode`` dynamic: PAUSE when the ingress's
    shared use (held − ``reserve``) reaches ``alpha`` × free shared buffer, RESUME when it is at or
    below max(``xon``, that limit − ``resume_offset``). ``headroom``: what the PG may take after
    PAUSE (SONiC ``xoff``), None when not given."""

    mode: str = "static"
    xoff: int | None = None  # static trigger
    xon: int | None = None  # static resume; dynamic: resume floor (SONiC xon)
    alpha: float | None = None  # dynamic trigger factor
    resume_offset: int | None = None  # dynamic: resume this far below the trigger (SONiC xon_offset)
    reserve: int = 0  # dynamic: guaranteed bytes not charged to the shared pool (SONiC size)
    headroom: int | None = None  # SONiC xoff


def static_trigger_packets(xoff: int, packet_bytes: int) -> int:
    """How many back-to-back packets of ``packet_bytes`` an ingress holds when a static PAUSE
    fires (add, then ``>`` xoff: htsim's rule and the engine's)."""
    if packet_bytes <= 0:
        raise ValueError("packet_bytes must be positive")
    return xoff // packet_bytes + 1


def static_resume_packets(xon: int, packet_bytes: int) -> int:
    """Packets still held when a static RESUME is sent (``<`` xon)."""
    return max((xon - 1) // packet_bytes, 0) if xon > 0 else 0


def alpha_of_dynamic_th(n: int, where: str = "dynamic_th") -> float:
    """SONiC ``dynamic_th`` n → α = 2^n (formats.md §1.5; YANG range −8..7)."""
    lo, hi = DYNAMIC_TH_RANGE
    if isinstance(n, bool) or not isinstance(n, int) or not lo <= n <= hi:
        raise InputError(f"{where}: {n!r} is not an integer in {lo}..{hi} (alpha = 2^dynamic_th)")
    return 2.0**n


def dynamic_th_of_alpha(alpha: float) -> int | None:
    """α → SONiC ``dynamic_th`` when α is a power of two in range, else None (no exact profile)."""
    if alpha <= 0:
        return None
    n = math.log2(alpha)
    if abs(n - round(n)) > 1e-12:
        return None
    n = int(round(n))
    lo, hi = DYNAMIC_TH_RANGE
    return n if lo <= n <= hi else None


def _int(profile: dict, key: str, where: str) -> int | None:
    v = profile.get(key)
    if v is None:
        return None
    try:
        out = int(str(v).strip())
    except ValueError:
        raise InputError(f"{where}.{key}: {v!r} is not a whole number of bytes") from None
    if out < 0:
        raise InputError(f"{where}.{key}: {out} must be ≥ 0 bytes")
    return out


def sonic_headroom_bytes(profile: dict) -> int | None:
    """The headroom of a SONiC BUFFER_PROFILE: its ``xoff`` (formats.md §1.5), None when absent or
    not a whole number (the audit reports malformed numbers elsewhere)."""
    try:
        return _int(profile, "xoff", "BUFFER_PROFILE")
    except InputError:
        return None


def from_sonic(profile: dict, where: str = "BUFFER_PROFILE") -> PfcProfile:
    """A SONiC BUFFER_PROFILE (strings or numbers: ``dynamic_th`` or ``static_th``, ``xoff``,
    ``xon``, ``xon_offset``, ``size``) → the engine's :class:`PfcProfile`.

    ``dynamic_th`` → dynamic mode with α = 2^n; ``static_th`` (bytes, > 0) → static mode with that
    trigger and RESUME at max(xon, static_th − xon_offset). ``xoff`` → headroom; ``size`` →
    reserve. Exactly one of dynamic_th / static_th is required."""
    dyn, sta = profile.get("dynamic_th"), profile.get("static_th")
    if (dyn is None) == (sta is None):
        raise InputError(f"{where}: give exactly one of dynamic_th (alpha = 2^n) or static_th (bytes)")
    headroom = _int(profile, "xoff", where)
    xon = _int(profile, "xon", where)
    xon_offset = _int(profile, "xon_offset", where)
    size = _int(profile, "size", where) or 0
    if dyn is not None:
        try:
            n = int(str(dyn).strip())
        except ValueError:
            raise InputError(f"{where}.dynamic_th: {dyn!r} is not an integer in -8..7") from None
        return PfcProfile(
            mode="dynamic",
            alpha=alpha_of_dynamic_th(n, f"{where}.dynamic_th"),
            xon=xon,
            resume_offset=xon_offset,
            reserve=size,
            headroom=headroom,
        )
    trig = _int(profile, "static_th", where)
    if not trig:
        raise InputError(f"{where}.static_th: 0 means no limit, so PFC would never fire; give bytes > 0")
    resume = (
        max(xon or 0, trig - xon_offset) if xon_offset is not None else (xon if xon is not None else trig)
    )
    if resume > trig:
        raise InputError(f"{where}.xon: {resume} B must not exceed static_th ({trig} B)")
    return PfcProfile(mode="static", xoff=trig, xon=resume, reserve=size, headroom=headroom)


def to_sonic(p: PfcProfile) -> dict[str, str]:
    """The engine's :class:`PfcProfile` → a SONiC BUFFER_PROFILE (strings, as CONFIG_DB holds
    them). Dynamic α must be a power of two in 2^−8..2^7."""
    out: dict[str, str] = {}
    if p.mode == "dynamic":
        n = dynamic_th_of_alpha(p.alpha if p.alpha is not None else 0.0)
        if n is None:
            raise InputError(
                f"alpha {p.alpha}: SONiC dynamic_th needs alpha = 2^n (a power of two) with n in -8..7"
            )
        out["dynamic_th"] = str(n)
        if p.resume_offset is not None:
            out["xon_offset"] = str(p.resume_offset)
    else:
        if not p.xoff:
            raise InputError("static PFC profile without a trigger (xoff bytes)")
        out["static_th"] = str(p.xoff)
    if p.xon is not None:
        out["xon"] = str(p.xon)
    if p.headroom is not None:
        out["xoff"] = str(p.headroom)
    out["size"] = str(p.reserve)
    return out


def with_defaults(p: PfcProfile, *, alpha: float, resume_offset: int) -> PfcProfile:
    """Fill a dynamic profile's unset α / resume offset with the engine's sourced defaults."""
    if p.mode != "dynamic":
        return p
    return replace(
        p,
        alpha=alpha if p.alpha is None else p.alpha,
        resume_offset=resume_offset if p.resume_offset is None else p.resume_offset,
    )


def cable_bytes(speed_mbps: float, cable_m: float) -> float:
    """Bytes in flight on the cable during one PAUSE round trip (hardware-facts §E.1 step 2)."""
    return 2.0 * cable_m * speed_mbps * 1e6 / SPEED_OF_LIGHT_M_S / 8.0


def headroom_floor(
    speed_mbps: float, cable_m: float, port_mtu: int = DEFAULT_PORT_MTU, frame_bytes: int = ROCE_FRAME_BYTES
) -> int:
    """Vendor-neutral floor for PFC headroom (SONiC ``xoff``): the cable round trip at the port
    speed, plus two maximum frames — the frame being sent when XOFF is due (any class: the port
    MTU) and the lossless frame the peer is sending when PAUSE lands (``frame_bytes``) — plus the
    PFC response time (:data:`PFC_RESPONSE_BYTES`). These are the cable, MTU and response terms
    of hardware-facts §E.1 step 5 without the cell and pipeline terms."""
    return int(math.ceil(cable_bytes(speed_mbps, cable_m) + port_mtu + frame_bytes + PFC_RESPONSE_BYTES))


def ns3_headroom(rate_bps: float, link_delay_s: float) -> int:
    """ns-3 HPCC's per-port headroom: 3 × rate × one-way link delay, in bytes (``third.cc``
    l. 836: ``rate * delay / 8 / 1000000000 * 3``, the delay in ns time steps, ns-3's default
    resolution)."""
    return int(3 * rate_bps * link_delay_s / 8)


def engine_headroom_floor(rate_bps: float, link_delay_s: float, packet_bytes: int) -> int:
    """What an engine ingress receives after its PAUSE fires: one round trip of the link at line
    rate, the packet the peer is sending when PAUSE lands, and the PAUSE frame's own
    serialisation (64 B) — the engine's peer responds at once (no response time, no port-MTU
    frame of another class). ``headroom_floor`` with ``cable_m`` from the delay is the physical
    version for a real switch."""
    return int(math.ceil(2 * link_delay_s * rate_bps / 8 + packet_bytes + 64))

"""ECN / DCQCN rules: marking on lossless queues, WRED thresholds and probabilities, Kmin
against the PFC XOFF point."""

from __future__ import annotations

from collections import defaultdict

from aifabric.audit.infer import queue_of as _queue_of
from aifabric.audit.rules.common import _group, _int, _lossless_pg_profiles, _ports_key
from aifabric.audit.rules.model import Fabric, Finding
from aifabric.audit.sonic import Device


def _truthy(v: str | None) -> bool:
    return str(v).lower() == "true"


def _ecn_queues(fab: Fabric, d: Device) -> list[tuple[str, int, str, str]]:
    """(port, queue, problem or "", wred profile) for each lossless queue of ``d``."""
    qs = d.queues()
    out = []
    for port, prios in d.lossless_ports().items():
        for tc in prios:
            q = _queue_of(d, port, tc)
            wp = qs.get((port, q), ("", {}))[1].get("wred_profile")
            if not wp:
                out.append((port, q, "no wred_profile on the queue", ""))
                continue
            prof = d.table("WRED_PROFILE").get(wp, {})
            if prof.get("ecn", "ecn_none") == "ecn_none":
                out.append(
                    (port, q, f"WRED_PROFILE {wp} has ecn {prof.get('ecn', 'ecn_none (default)')}", wp)
                )
            elif not _truthy(prof.get("wred_green_enable")):
                why = f"WRED_PROFILE {wp} has wred_green_enable {prof.get('wred_green_enable', 'false (default)')}"
                out.append((port, q, why, wp))
            else:
                out.append((port, q, "", wp))
    return out


def rule_ecn_disabled(fab: Fabric) -> list[Finding]:
    """Severity follows the design's intent: ``dcqcn`` → error; ``pfc-only`` → info; ``auto`` →
    error when at least half of the role's lossless queues mark ECN, else warning."""
    out = []
    per = {d.name: _ecn_queues(fab, d) for d in fab.devices if d.has("QUEUE") or d.has("WRED_PROFILE")}
    for role, devs in fab.by_role().items():
        qs = [q for d in devs for q in per.get(d.name, [])]
        marked = sum(1 for q in qs if not q[2])
        role_uses = bool(qs) and 2 * marked >= len(qs)
        for d in devs:
            if d.name not in per:
                continue
            bad = [((q, why, wp), port) for port, q, why, wp in per[d.name] if why]
            if fab.intent == "dcqcn":
                sev, basis = "error", "--intent dcqcn"
            elif fab.intent == "pfc-only":
                sev, basis = "info", "--intent pfc-only"
            elif role_uses:
                sev, basis = "error", f"{marked} of {len(qs)} lossless queues of the {role} switches mark ECN"
            else:
                sev, basis = "warning", f"no majority of {role} lossless queues marks ECN; state --intent"
            for (q, why, wp), ports in _group(bad).items():
                out.append(
                    Finding(
                        "ecn-disabled",
                        sev,
                        d.name,
                        f"QUEUE|{_ports_key(ports)}|{q}",
                        f"lossless queue {q} does not mark ECN ({why}): without ECN/DCQCN, congestion is "
                        "handled by PFC alone (pause storms, head-of-line blocking)",
                        {
                            "queue": str(q),
                            "reason": why,
                            "wred_profile": wp or "none",
                            "intent": fab.intent,
                            "judged_by": basis,
                        },
                        f"set QUEUE|<port>|{q} wred_profile to a profile with ecn ecn_all and wred_green_enable "
                        "true" + ("" if sev != "info" else " if DCQCN is ever wanted"),
                    )
                )
    return out


def rule_ecn_kmin_ge_kmax(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        for name, p in d.table("WRED_PROFILE").items():
            for c in ("green", "yellow", "red"):
                lo, hi = _int(p.get(f"{c}_min_threshold")), _int(p.get(f"{c}_max_threshold"))
                if (
                    lo is None
                    or hi is None
                    or lo < hi
                    or not _truthy(p.get(f"wred_{c}_enable", "true" if c == "green" else "false"))
                ):
                    continue
                out.append(
                    Finding(
                        "ecn-kmin-ge-kmax",
                        "error" if lo > hi else "warning",
                        d.name,
                        f"WRED_PROFILE|{name}",
                        f"{c} Kmin {lo} B {'>' if lo > hi else '='} Kmax {hi} B: "
                        + (
                            "YANG rejects max < min; marking is undefined"
                            if lo > hi
                            else "marking jumps from 0 to Pmax at one queue depth (no DCQCN ramp)"
                        ),
                        {f"{c}_min_threshold": str(lo), f"{c}_max_threshold": str(hi)},
                        f"set {c}_min_threshold below {c}_max_threshold (e.g. 150000 / 1500000 B, NVIDIA RoCE preset)",
                    )
                )
    return out


def rule_wred_probability_range(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        for name, p in d.table("WRED_PROFILE").items():
            for c in ("green", "yellow", "red"):
                v = _int(p.get(f"{c}_drop_probability"))
                if v is not None and not 0 <= v <= 100:
                    out.append(
                        Finding(
                            "wred-probability-range",
                            "error",
                            d.name,
                            f"WRED_PROFILE|{name}",
                            f"{c}_drop_probability {v} is outside 0..100 (percent, YANG sonic-wred-profile)",
                            {f"{c}_drop_probability": str(v)},
                            f"set {c}_drop_probability to 0..100 (SONiC default 5)",
                        )
                    )
    return out


def _pfc_trigger_bytes(d: Device, prof: dict[str, str]) -> int | None:
    """Bytes one congested lossless PG holds when it sends XOFF: reserved size + shared limit.
    Dynamic: limit = α·free with α = 2^dynamic_th; alone on the pool, T = α/(1+α) · pool size
    (SAI saibuffer.h semantics, formats.md §1.5). Static: static_th (0 = unlimited → None)."""
    pool = d.table("BUFFER_POOL").get(prof.get("pool", ""), {})
    size = _int(prof.get("size"), 0) or 0
    if "static_th" in prof or pool.get("mode") == "static":
        st = _int(prof.get("static_th"), 0)
        return size + st if st else None
    th = _int(prof.get("dynamic_th"))
    psize = _int(pool.get("size"))
    if th is None or not psize:
        return None
    alpha = 2.0**th
    return int(size + alpha / (1 + alpha) * psize)


def rule_ecn_above_pfc_threshold(fab: Fabric) -> list[Finding]:
    out = []
    for d in fab.devices:
        qs = d.queues()
        groups: dict[tuple, list[str]] = defaultdict(list)
        for (port, pg), (pname, prof, _synth) in _lossless_pg_profiles(d).items():
            q = _queue_of(d, port, pg)
            wp = qs.get((port, q), ("", {}))[1].get("wred_profile")
            w = d.table("WRED_PROFILE").get(wp or "")
            trig = _pfc_trigger_bytes(d, prof)
            if not w or trig is None:
                continue
            kmin, kmax = _int(w.get("green_min_threshold")), _int(w.get("green_max_threshold"))
            if kmin is None or kmax is None:
                continue
            if kmin >= trig:
                groups[(wp, "error", kmin, kmax, trig, pname)].append(port)
            elif kmax > trig:
                groups[(wp, "warning", kmin, kmax, trig, pname)].append(port)
        for (wp, sev, kmin, kmax, trig, pname), ports in groups.items():
            what = f"Kmin {kmin} B" if sev == "error" else f"Kmax {kmax} B"
            out.append(
                Finding(
                    "ecn-above-pfc-threshold",
                    sev,
                    d.name,
                    f"WRED_PROFILE|{wp}",
                    f"{what} is above the PFC XOFF point {trig} B of {pname} (reserved size + shared limit): "
                    + (
                        "PFC fires before ECN marks, so DCQCN never slows senders down"
                        if sev == "error"
                        else "marking never reaches Pmax before PFC fires"
                    ),
                    {
                        "green_min_threshold": str(kmin),
                        "green_max_threshold": str(kmax),
                        "pfc_trigger_bytes": str(trig),
                        "pg_profile": pname,
                        "ports": _ports_key(ports),
                    },
                    "lower the ECN thresholds below the PFC trigger, or raise dynamic_th / the pool size",
                )
            )
    return out

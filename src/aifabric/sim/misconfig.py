"""Misconfigurations and faults of the lossless layer, resolved against a topology.

* ``fabric.pfc_overrides`` — switches whose PFC thresholds differ from ``fabric.pfc`` (two batches
  of switches with other firmware defaults). :func:`pfc_overrides` gives the effective thresholds
  per entry; the engine copies them onto every ingress port of those switches.
* ``fabric.pause_storms`` — a device that sends spurious PAUSE frames (a flow-control firmware
  bug); ``fabric.receiver_stalls`` — a host NIC that stops draining (PAUSE on RoCE, credits withheld
  on InfiniBand: the leaf's egress toward it stops either way); ``fabric.pfc_watchdog`` ends a pause
  longer than its detection time. :func:`pause_storms` gives the egress ports it pauses (its neighbours' egress toward it);
  :func:`pause_storm_events` the (time, port, on) events the kernel pre-schedules.

numpy only (no numba), so ``aifabric validate`` can check a scenario against its topology quickly
(:func:`check`).
"""

from __future__ import annotations

import numpy as np

from aifabric.errors import InputError

# injected pause intervals (ports × pauses) scheduled up front; each is two heap rows
MAX_INJECTED_PAUSES = 1_000_000


def _examples(topo, switches_only: bool) -> str:
    tier = np.asarray(topo.node_tier)
    ids = np.flatnonzero(tier != 0) if switches_only else np.arange(topo.num_nodes)
    what = "switch" if switches_only else "node"
    if not len(ids):
        return f"a {what} of the topology (it has none)"
    shown = ", ".join(f"{topo.node_names[i]} ({i})" for i in ids[:3].tolist())
    return f"{what} names or ids, e.g. {shown}{', ...' if len(ids) > 3 else ''}"


def node_of(topo, ref, field: str, switches_only: bool = False) -> int:
    """Node id of ``ref`` (a name, an id, or an id written as a string); InputError naming ``field``."""
    value = ref
    if isinstance(ref, str) and ref.isdigit():
        ref = int(ref)
    if isinstance(ref, int | np.integer) and not isinstance(ref, bool):
        if not 0 <= int(ref) < topo.num_nodes:
            raise InputError("no such node", field=field, value=value, allowed=_examples(topo, switches_only))
        return int(ref)
    try:
        return int(topo.node_id(ref))
    except (KeyError, TypeError):
        raise InputError(
            "no such node", field=field, value=value, allowed=_examples(topo, switches_only)
        ) from None


def fabric_xoff(fab) -> int:
    """``fabric.pfc.xoff``, else the sourced static default (scenario.DEFAULTS)."""
    from aifabric.scenario import default

    return int(fab.pfc.xoff if fab.pfc.xoff is not None else default("pfc.xoff_bytes"))


def fabric_xon(fab) -> int:
    """``fabric.pfc.xon`` as given, else the sourced static default (not yet capped at xoff)."""
    from aifabric.scenario import default

    return int(fab.pfc.xon if fab.pfc.xon is not None else default("pfc.xon_bytes"))


def fabric_alpha(fab) -> float:
    """``fabric.pfc.alpha``, else the sourced dynamic-threshold default (1/8)."""
    from aifabric.scenario import default

    return fab.pfc.alpha if fab.pfc.alpha is not None else float(default("pfc.dynamic_alpha"))


def fabric_pfc(fab) -> dict:
    """The fabric-wide PFC setting as the kernel runs it (static thresholds or dynamic alpha)."""
    if fab.pfc.mode == "dynamic":
        return {"mode": "dynamic", "xoff_bytes": None, "xon_bytes": None, "alpha": float(fabric_alpha(fab))}
    xoff = fabric_xoff(fab)
    return {"mode": "static", "xoff_bytes": xoff, "xon_bytes": min(fabric_xon(fab), xoff), "alpha": None}


def pfc_overrides(fab, topo) -> list[dict]:
    """``fabric.pfc_overrides`` → one dict per entry: ``switches`` (names), ``node_ids``, ``mode``
    and the effective ``xoff_bytes`` / ``xon_bytes`` (static) or ``alpha`` (dynamic)."""

    out: list[dict] = []
    seen: dict[int, int] = {}
    tier = np.asarray(topo.node_tier)
    for i, o in enumerate(fab.pfc_overrides):
        field = f"fabric.pfc_overrides.{i}.switches"
        ids: list[int] = []
        for ref in o.switches:
            n = node_of(topo, ref, field, switches_only=True)
            if tier[n] == 0:
                raise InputError(
                    f"{topo.node_names[n]} is a host; PFC thresholds are set on switches",
                    field=field,
                    value=ref,
                    allowed=_examples(topo, True),
                )
            if n in seen and seen[n] != i:
                raise InputError(
                    f"{topo.node_names[n]} is also listed in fabric.pfc_overrides.{seen[n]}",
                    field=field,
                    value=ref,
                    allowed="each switch in one override at most",
                )
            if n not in seen:
                seen[n] = i
                ids.append(n)
        mode = o.mode or fab.pfc.mode
        entry = {
            "switches": [topo.node_names[n] for n in ids],
            "node_ids": ids,
            "mode": mode,
            "xoff_bytes": None,
            "xon_bytes": None,
            "alpha": None,
        }
        if mode == "static":
            xoff = o.xoff if o.xoff is not None else fabric_xoff(fab)
            xon = o.xon if o.xon is not None else min(fabric_xon(fab), xoff)
            if xon > xoff:
                raise InputError(
                    f"xon ({xon} B) must not exceed xoff ({xoff} B)", field=f"fabric.pfc_overrides.{i}.xon"
                )
            entry.update(xoff_bytes=int(xoff), xon_bytes=int(xon))
        else:
            entry["alpha"] = float(o.alpha if o.alpha is not None else fabric_alpha(fab))
        out.append(entry)
    return out


def _egress_toward(topo, node: int, peers: set[int] | None) -> list[int]:
    """Directed ports (2·link + dir) whose receiving end is ``node`` and sending end is in ``peers``
    (every neighbour when None), in link order."""
    la = np.asarray(topo.link_a)
    lb = np.asarray(topo.link_b)
    ports = []
    for lk in np.flatnonzero((la == node) | (lb == node)).tolist():
        if lb[lk] == node:
            nbr, port = int(la[lk]), 2 * lk
        else:
            nbr, port = int(lb[lk]), 2 * lk + 1
        if peers is None or nbr in peers:
            ports.append(port)
    return ports


def storm_pauses(s, until_ps: int | None) -> int:
    """Pauses of storm ``s`` that start by ``until_ps`` (all of them when None)."""
    if until_ps is None:
        return s.count
    if s.start > until_ps:
        return 0
    if s.count == 1:
        return 1
    return int(min(s.count, (until_ps - s.start) // s.period + 1))


def pause_storms(fab, topo, until_ps: int | None = None) -> list[dict]:
    """``fabric.pause_storms`` and ``fabric.receiver_stalls`` → one dict per entry: ``node`` /
    ``peers`` (names), ``ports`` (the paused egress ports), timing in ps and ``pauses`` (those that
    start by ``until_ps``). With ``fabric.pfc_watchdog`` a pause longer than its detection time ends
    there (``watchdog_cut``: the storm is declared and PAUSE ignored)."""
    out: list[dict] = []
    total = 0
    entries = [("pause_storms", i, s) for i, s in enumerate(fab.pause_storms)]
    entries += [("receiver_stalls", i, s) for i, s in enumerate(getattr(fab, "receiver_stalls", ()))]
    wd = getattr(fab, "pfc_watchdog", None)
    detect = int(wd.detection) if wd is not None and wd.enabled else None
    tier = np.asarray(topo.node_tier)
    for key, i, s in entries:
        node = node_of(topo, s.node, f"fabric.{key}.{i}.node")
        if key == "receiver_stalls" and tier[node] != 0:
            raise InputError(
                f"{topo.node_names[node]} is a switch; a receiver stall is a host NIC that stops draining",
                field=f"fabric.{key}.{i}.node",
                value=s.node,
                allowed=_examples(topo, False),
            )
        nbrs = {p for p, _ in topo.neighbors(node)}
        peers = None
        if s.peers is not None:
            peers = set()
            for ref in s.peers:
                n = node_of(topo, ref, f"fabric.pause_storms.{i}.peers")
                if n not in nbrs:
                    names = sorted(topo.node_names[j] for j in nbrs)
                    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
                    raise InputError(
                        f"{topo.node_names[n]} is not a neighbour of {topo.node_names[node]}",
                        field=f"fabric.{key}.{i}.peers",
                        value=ref,
                        allowed=f"neighbours of {topo.node_names[node]}: {shown}",
                    )
                peers.add(n)
        ports = _egress_toward(topo, node, peers)
        n_pauses = storm_pauses(s, until_ps)
        total += n_pauses * len(ports)
        if total > MAX_INJECTED_PAUSES:
            raise InputError(
                f"more than {MAX_INJECTED_PAUSES:,} injected pauses (ports x count) to schedule",
                field=f"fabric.{key}.{i}.count",
                value=s.count,
                allowed="fewer pauses, fewer peers, or a shorter sim.until",
            )
        pnames = sorted(
            {topo.node_names[int(topo.link_a[p // 2] if p % 2 == 0 else topo.link_b[p // 2])] for p in ports}
        )
        duration = int(s.duration)
        cut = detect is not None and duration > detect
        out.append(
            {
                "kind": key,
                "node": topo.node_names[node],
                "node_id": node,
                "peers": pnames,
                "ports": ports,
                "start_ps": int(s.start),
                "duration_ps": detect if cut else duration,
                "watchdog_cut": bool(cut),
                "period_ps": int(s.period) if s.period is not None else None,
                "count": int(s.count),
                "pauses": n_pauses,
            }
        )
    return out


def pause_storm_events(storms: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(times ps, kernel args port·2 + on) of every injected pause start and end, starts first (at
    equal times a pause that starts as another ends keeps the port paused)."""
    on_t, on_a, off_t, off_a = [], [], [], []
    for s in storms:
        k = np.arange(s["pauses"], dtype=np.int64)
        t0 = s["start_ps"] + k * (s["period_ps"] or 0)
        for p in s["ports"]:
            on_t.append(t0)
            on_a.append(np.full(len(k), 2 * p + 1, np.int64))
            off_t.append(t0 + s["duration_ps"])
            off_a.append(np.full(len(k), 2 * p, np.int64))
    if not on_t:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(on_t + off_t), np.concatenate(on_a + off_a)


def check(fab, topo, until_ps: int | None = None) -> None:
    """Raise the InputError a simulation of ``fab`` on ``topo`` would raise for its overrides / storms."""
    if fab.pfc_overrides:
        pfc_overrides(fab, topo)
    if fab.pause_storms or getattr(fab, "receiver_stalls", ()):
        pause_storms(fab, topo, until_ps)

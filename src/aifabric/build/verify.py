"""``aifabric verify-build``: the cabled fabric against the plan, difference by difference.

PLAN is a ``plan --build`` folder (``build.json`` + ``cables.json``), a ``plan --json`` file
(re-planned, then its cable plan built), or a reference ``ibnetdiscover`` dump (a fabric known to
be right). The found fabric is an ``ibnetdiscover`` dump or LLDP JSON.

Kinds (docs/interface.md): ``missing`` (a planned link absent), ``extra`` (a link not in the
plan), ``wrong-port`` (one end right, the other on another port — another device means another
rail or switch), ``swapped`` (two cables with their far ends exchanged), ``wrong-speed`` /
``wrong-width`` (the link is up below its planned speed or lanes: InfiniBand only, LLDP carries
neither), ``no-answer`` (a planned device absent from the dump). Each has both ends, what was
expected and found, and a fix; :mod:`aifabric.build.miswire` adds what it costs the job's
rail-local traffic.
"""

from __future__ import annotations

import json
from pathlib import Path

from aifabric.build.asbuilt import Seen
from aifabric.errors import InputError

TECH_OF_SOURCE = {"ibnetdiscover": "infiniband", "lldp": "roce"}


def _ib_port(device_role: str, port: str) -> str:
    """A CA port as ``hca/port`` (a plan's ``mlx5_0`` is port 1); switch and bare CA ports stay."""
    return port if device_role != "server" or "/" in port or port.isdigit() else f"{port}/1"


def _from_folder(folder: Path, technology: str) -> tuple[list[dict], dict, dict]:
    cands = (
        [folder]
        if (folder / "build.json").is_file()
        else sorted(p for p in folder.iterdir() if (p / "build.json").is_file())
    )
    if not cands:
        raise InputError(
            "no build.json in the folder or its sub-folders",
            file=str(folder),
            allowed="a plan --build folder",
        )
    manifests = [(p, json.loads((p / "build.json").read_text())) for p in cands]
    fits = [(p, m) for p, m in manifests if m.get("technology") == technology]
    if len(fits) != 1:
        raise InputError(
            f"{len(fits)} {technology} fabrics in the build folder",
            file=str(folder),
            allowed="one: " + ", ".join(f"{p.name} ({m.get('technology')})" for p, m in manifests),
        )
    p, m = fits[0]
    links = json.loads((p / "cables.json").read_text())["links"]
    return (
        links,
        m["devices"],
        {"source": str(p), "design_label": m.get("design_label"), "plan": m.get("plan")},
    )


def load_plan(path: Path, technology: str, catalog=None) -> tuple[list[dict], dict, dict]:
    """(cable-plan rows, devices, info) of PLAN for the found fabric's ``technology``."""
    path = Path(path)
    if path.is_dir():
        return _from_folder(path, technology)
    from aifabric.memory import read_text

    text = read_text(path, "plan file", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError("not JSON", file=str(path), field=f"line {exc.lineno}") from None
        fabrics = [
            f for f in doc.get("fabrics", []) if isinstance(f, dict) and f.get("technology") == technology
        ]
        if len(fabrics) != 1:
            raise InputError(
                f"expected one {technology} fabric in 'fabrics'",
                file=str(path),
                allowed="aifabric plan --json output",
            )
        from aifabric.build.cables import build_cable_plan
        from aifabric.build.sizing import plan_from_dict
        from aifabric.hardware.catalog import load_catalog

        cat = catalog or load_catalog(None)
        built = build_cable_plan(plan_from_dict(fabrics[0], cat, str(path)), cat)
        return built.links, built.devices, {"source": str(path), "plan": fabrics[0]}
    if technology != "infiniband":
        raise InputError("an ibnetdiscover dump is a plan for --ibnetdiscover only", file=str(path))
    from aifabric.build.asbuilt import derived_plan

    rows, devices = derived_plan(path)
    return rows, devices, {"source": str(path), "derived_from": "ibnetdiscover"}


def _end(d: tuple[str, str]) -> str:
    return f"{d[0]}:{d[1]}"


def _link_text(a, b) -> str:
    return f"{_end(a)} ↔ {_end(b)}"


def _diff(kind, a, b, expected, found, fix, effect=None, **extra) -> dict:
    return {
        "kind": kind,
        "a": a,
        "b": b,
        "expected": expected,
        "found": found,
        "fix": fix,
        "rail_traffic_moved": 0.0,
        "_effect": effect or {},
        **extra,
    }


def planned_links(rows: list[dict], devices: dict, technology: str) -> dict[tuple, dict]:
    """The plan's links keyed by their two ends, sorted (InfiniBand CA ports as ``hca/port``)."""
    ib = technology == "infiniband"
    role = {d: x.get("role", "") for d, x in devices.items()}
    exp: dict[tuple, dict] = {}
    for x in rows:
        a = (x["a_device"], _ib_port(role.get(x["a_device"], ""), x["a_port"]) if ib else x["a_port"])
        b = (x["b_device"], _ib_port(role.get(x["b_device"], ""), x["b_port"]) if ib else x["b_port"])
        exp[tuple(sorted((a, b)))] = {**x, "_a": a, "_b": b}
    return exp


def compare(
    rows: list[dict], devices: dict, seen: list[Seen], found_devices: dict, technology: str
) -> list[dict]:
    """The differences between the plan's links and the found ones (unmodelled cost)."""
    ib = technology == "infiniband"
    exp = planned_links(rows, devices, technology)
    got = {s.key: s for s in seen}
    out: list[dict] = []
    for key in exp.keys() & got.keys():
        x, s = exp[key], got[key]
        if ib and s.lanes and x.get("lanes") and s.lanes != x["lanes"]:
            out.append(_width(x, s))
        elif ib and s.speed and x.get("speed") and s.speed != x["speed"]:
            out.append(_speed(x, s))
    present = set(found_devices) | {e[0] for s in seen for e in (s.a, s.b)}
    silent = sorted(d for d in {e[0] for k in exp for e in k} if d not in present)
    for dev in silent:
        n = sum(1 for k in exp if dev in (k[0][0], k[1][0]))
        out.append(
            _diff(
                "no-answer",
                dev,
                "",
                f"{dev} with {n} links",
                "not in the discovered fabric",
                f"power on {dev} and check its cables; then rediscover",
                {"remove": [k for k in exp if dev in (k[0][0], k[1][0])]},
            )
        )
    missing = [k for k in exp if k not in got and k[0][0] not in silent and k[1][0] not in silent]
    extra = {k: got[k] for k in got if k not in exp}
    moved = _pair_moves(missing, exp, extra)
    out += _swaps_and_moves(moved, exp)
    for k in missing:
        if k in {m[0] for m in moved}:
            continue
        x = exp[k]
        part = (
            f" ({x.get('cable_part')}, {x.get('ordered_m')} m, cable {x.get('cable_id')})"
            if x.get("cable_part")
            else ""
        )
        out.append(
            _diff(
                "missing",
                _end(x["_a"]),
                _end(x["_b"]),
                _link_text(x["_a"], x["_b"]),
                "no link",
                f"connect {_end(x['_a'])} to {_end(x['_b'])}{part}; if cabled, reseat and check the cable and optics",
                {"remove": [k]},
            )
        )
    for s in extra.values():
        out.append(
            _diff(
                "extra",
                _end(s.a),
                _end(s.b),
                "no link",
                _link_text(s.a, s.b),
                f"remove the cable between {_end(s.a)} and {_end(s.b)} (not in the plan)",
                {"add": [s]},
            )
        )
    order = {
        "no-answer": 0,
        "swapped": 1,
        "wrong-port": 2,
        "missing": 3,
        "extra": 4,
        "wrong-speed": 5,
        "wrong-width": 6,
    }
    out.sort(key=lambda d: (order[d["kind"]], d["a"], d["b"]))
    return out


def _width(x, s) -> dict:
    return _diff(
        "wrong-width",
        _end(x["_a"]),
        _end(x["_b"]),
        f"{x['lanes']}x{x.get('speed', '')}",
        f"{s.lanes}x{s.speed}",
        f"the link runs on {s.lanes} of {x['lanes']} lanes: reseat or replace the cable/optics "
        f"(cable {x.get('cable_id') or '?'}) and check both ports' width settings",
        {"rate": [(tuple(sorted((x["_a"], x["_b"]))), s.rate_gbps)]},
    )


def _speed(x, s) -> dict:
    return _diff(
        "wrong-speed",
        _end(x["_a"]),
        _end(x["_b"]),
        f"{x['lanes']}x{x['speed']}",
        f"{s.lanes}x{s.speed}",
        f"the link trained at {s.speed}, not {x['speed']}: check the cable/optics part "
        f"({x.get('cable_part') or 'as planned'}) and both ports' speed settings",
        {"rate": [(tuple(sorted((x["_a"], x["_b"]))), s.rate_gbps)]},
    )


def _pair_moves(missing: list, exp: dict, extra: dict) -> list[tuple]:
    """(missing key, found link, fixed end, planned other end, found other end): a planned link
    whose one end is cabled elsewhere (lower-tier end first as the fixed one)."""
    by_end: dict[tuple, list] = {}
    for k, s in extra.items():
        by_end.setdefault(s.a, []).append(k)
        by_end.setdefault(s.b, []).append(k)
    used: set = set()
    moves = []
    for k in sorted(missing):
        x = exp[k]
        for fixed, other in ((x["_a"], x["_b"]), (x["_b"], x["_a"])):
            cand = [e for e in by_end.get(fixed, []) if e not in used]
            if cand:
                e = cand[0]
                used.add(e)
                s = extra.pop(e)
                moves.append((k, s, fixed, other, s.b if s.a == fixed else s.a))
                break
    return moves


def _swaps_and_moves(moves: list[tuple], exp: dict) -> list[dict]:
    out, done = [], set()
    index = {(m[3], m[4]): i for i, m in enumerate(moves)}
    for i, (k, e, fixed, planned, found) in enumerate(moves):
        if i in done:
            continue
        j = index.get((found, planned))
        if j is not None and j != i and j not in done and moves[j][4] == planned:
            done |= {i, j}
            k2, e2, fixed2 = moves[j][0], moves[j][1], moves[j][2]
            out.append(
                _diff(
                    "swapped",
                    _end(fixed),
                    _end(fixed2),
                    f"{_link_text(fixed, planned)}; {_link_text(fixed2, found)}",
                    f"{_link_text(fixed, found)}; {_link_text(fixed2, planned)}",
                    f"swap the two cables at {_end(planned)} and {_end(found)}",
                    {"remove": [k, k2], "add": [e, e2]},
                )
            )
            continue
        done.add(i)
        x = exp[k]
        note = ""
        if planned[0] != found[0]:
            note = f" ({found[0]} instead of {planned[0]}"
            rail = x.get("rail", -1)
            note += f"; the plan puts this cable on rail {rail})" if rail is not None and rail >= 0 else ")"
        out.append(
            _diff(
                "wrong-port",
                _end(fixed),
                _end(planned),
                _link_text(fixed, planned),
                _link_text(fixed, found) + note,
                f"move the cable from {_end(found)} to {_end(planned)}",
                {"remove": [k], "add": [e]},
            )
        )
    return out


def verify_build(
    plan_path: Path,
    found_path: Path,
    source: str,
    mapping_path: Path | None = None,
    catalog=None,
    cost: bool = True,
) -> dict:
    """Compare; the result has ``differences`` (the contract's keys) and a ``summary``."""
    from aifabric.build import asbuilt

    technology = TECH_OF_SOURCE[source]
    mapping = asbuilt.load_mapping(mapping_path)
    if source == "ibnetdiscover":
        seen, found_devices = asbuilt.read_ibnetdiscover_links(Path(found_path), mapping)
    else:
        seen, found_devices = asbuilt.read_lldp_links(Path(found_path), mapping)
    rows, devices, info = load_plan(Path(plan_path), technology, catalog)
    diffs = compare(rows, devices, seen, found_devices, technology)
    costed = {}
    if cost and diffs:
        from aifabric.build.miswire import rail_costs

        costed = rail_costs(planned_links(rows, devices, technology), devices, diffs)
    for d in diffs:
        d.pop("_effect", None)
    kinds: dict[str, int] = {}
    for d in diffs:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    return {
        "plan": info.get("source"),
        "found": str(found_path),
        "technology": technology,
        "match": not diffs,
        "differences": diffs,
        "summary": {
            "planned_links": len(rows),
            "found_links": len(seen),
            "differences": len(diffs),
            "by_kind": kinds,
            **costed,
        },
    }

"""NVIDIA Cumulus Linux NVUE configs → the normalised switch model (:class:`~aifabric.audit.sonic.Device`).

Reads ``nv config show -o yaml`` (a list of ``- header:`` / ``- set:`` documents, the ``set`` tree
mirroring the ``nv set`` paths) and ``nv set`` command lists (``nv config show -o commands``).
What ``nv set qos roce`` (= ``mode lossless``) applies is taken from the Cumulus Linux 5.14
RoCE page (formats.md §3.2): trust pcp,dscp; DSCP n·8…n·8+7 → switch priority n; SP3 → TC3,
SP6 → TC6, others → TC0; ETS TC6 strict, TC3 and TC0 DWRR 50 %; ECN on TC3 (150000 / 1501500 B,
probability 100); PFC on SP3, cable length 100 m. Explicit ``qos pfc``, ``qos mapping``,
``qos egress-queue-mapping``, ``qos congestion-control`` and ``qos egress-scheduler`` settings
override these defaults, as NVUE applies them.

The translation: switch priority ↔ SONiC TC/PG (``DSCP_TO_TC_MAP`` = DSCP → SP, PFC priorities =
``pfc_enable``), NVUE traffic class ↔ SONiC queue (``TC_TO_QUEUE_MAP``), congestion control
↔ ``WRED_PROFILE`` on ``QUEUE``, egress scheduler ↔ ``SCHEDULER``. Buffers are managed by the
switch (no BUFFER_* tables), so the headroom rules do not apply. Findings name the NVUE object
(``qos mapping default-global dscp``) with the SONiC-model object in the evidence.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from aifabric.audit.sonic import Device
from aifabric.errors import InputError

ROCE_DEFAULTS = {
    "pfc_sp": (3,),
    "cable_m": 100,
    "sp_to_tc": {3: 3, 6: 6},  # others → 0
    "ecn": {3: (150000, 1501500, 100)},
    "sched": {6: ("STRICT", None), 3: ("DWRR", 50), 0: ("DWRR", 50)},
}
DEFAULT_MTU = 9216  # Cumulus Linux default interface MTU
NATIVE = {
    "DSCP_TO_TC_MAP": "qos mapping {key} dscp",
    "TC_TO_QUEUE_MAP": "qos egress-queue-mapping {key}",
    "TC_TO_PRIORITY_GROUP_MAP": "qos pfc default-global switch-priority",
    "PORT_QOS_MAP": "qos pfc default-global switch-priority [{key}]",
    "QUEUE": "qos congestion-control default-global traffic-class {idx} [{key}]",
    "WRED_PROFILE": "qos congestion-control default-global traffic-class {key}",
    "SCHEDULER": "qos egress-scheduler default-global traffic-class {key}",
    "PORT": "interface {key} link mtu",
    "CABLE_LENGTH": "qos pfc default-global cable-length",
}
_LEAF_KEYS = {
    "mode",
    "switch-priority",
    "traffic-class",
    "mtu",
    "hostname",
    "trust",
    "cable-length",
    "ecn",
    "red",
    "min-threshold",
    "max-threshold",
    "probability",
    "bw-percent",
    "tx",
    "rx",
    "enable",
    "memory-percent",
    "port-default-sp",
    "type",
}


def expand_ids(text: str, prefix: str = "") -> list[str]:
    """``swp1-4,swp7`` → swp1..swp4, swp7; ``0-3,5`` → 0..3, 5. Raises ValueError when unreadable."""
    out: list[str] = []
    for part in str(text).split(","):
        part = part.strip()
        m = re.fullmatch(r"([A-Za-z_]*)(\d+)(?:-(?:[A-Za-z_]*)(\d+))?(?:s(\d+))?", part)
        if not m:
            raise ValueError(part)
        name, lo, hi = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))
        if hi < lo or hi - lo > 512:
            raise ValueError(part)
        out.extend(f"{name or prefix}{i}" for i in range(lo, hi + 1))
    return out


def _nums(v, top: int, what: str, file: str, field: str) -> list[int]:
    if isinstance(v, dict):
        v = ",".join(str(k) for k in v)
    try:
        vals = [int(x) for x in expand_ids(str(v))]
    except ValueError:
        raise InputError(
            f"bad {what} list", file=file, field=field, value=v, allowed=f"0..{top}, e.g. 3 or 0-3,5"
        ) from None
    if any(not 0 <= x <= top for x in vals):
        raise InputError(f"{what} out of range", file=file, field=field, value=v, allowed=f"0..{top}")
    return vals


def _int(v, file: str, field: str, lo: int = 0, hi: int = 10**12) -> int:
    s = str(v).strip().lower()
    mult = 1
    for suf, m in (("kb", 1000), ("mb", 1000**2), ("k", 1000), ("m", 1000**2)):
        if s.endswith(suf) and s[: -len(suf)].strip().replace(".", "", 1).isdigit():
            s, mult = s[: -len(suf)].strip(), m
            break
    try:
        x = int(float(s) * mult) if "." in s or mult != 1 else int(s)
    except ValueError:
        raise InputError(
            "not a number", file=file, field=field, value=v, allowed=f"an integer {lo}..{hi}"
        ) from None
    if not lo <= x <= hi:
        raise InputError("out of range", file=file, field=field, value=v, allowed=f"{lo}..{hi}")
    return x


def parse_commands(text: str, file: str) -> dict:
    """``nv set`` lines → the nested ``set`` tree (other lines: comments, ``nv config apply``, ignored)."""
    tree: dict = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if "$ " in s and s.split("$ ", 1)[1].startswith("nv "):
            s = s.split("$ ", 1)[1]  # a shell prompt in front
        if not s.startswith("nv set "):
            if s.startswith("nv unset ") or s.startswith("nv ") or not s or s.startswith("#"):
                continue
            raise InputError(
                "not an NVUE command",
                file=file,
                field=f"line {lineno}",
                value=s[:60],
                allowed="nv set ... lines",
            )
        toks = s.split()[2:]
        if not toks:
            raise InputError("empty nv set", file=file, field=f"line {lineno}")
        node = tree
        i = 0
        while i < len(toks):
            t = toks[i]
            if t in _LEAF_KEYS and i == len(toks) - 2:
                node[t] = toks[i + 1]
                break
            if i == len(toks) - 1:
                node.setdefault(t, {})
                break
            nxt = node.setdefault(t, {})
            if not isinstance(nxt, dict):
                nxt = node[t] = {str(nxt): {}}
            node = nxt
            i += 1
    return tree


def load_tree(path: str | Path, text: str) -> dict:
    """The ``set`` tree of an NVUE YAML or command file. Raises InputError."""
    f = str(path)
    if re.search(r"^\s*(\S*\$\s+)?nv set ", text, re.M):
        return parse_commands(text, f)
    from aifabric import yamlsafe

    try:
        doc = yamlsafe.load(text, f)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"malformed YAML{where}", file=f) from None
    except RecursionError:
        raise InputError("malformed YAML: nested too deeply", file=f) from None
    sets = []
    if isinstance(doc, list):
        sets = [d["set"] for d in doc if isinstance(d, dict) and isinstance(d.get("set"), dict)]
    elif isinstance(doc, dict):
        sets = [doc["set"]] if isinstance(doc.get("set"), dict) else [doc]
    if not sets:
        raise InputError(
            "no NVUE 'set' tree",
            file=f,
            allowed="nv config show -o yaml output (- header: / - set:) or nv set lines",
        )
    tree: dict = {}
    for s in sets:
        _merge(tree, s)
    return tree


def _merge(a: dict, b: dict) -> None:
    for k, v in b.items():
        k = str(k)
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            _merge(a[k], v)
        else:
            a[k] = v


def _get(tree: dict, *path):
    node = tree
    for p in path:
        if not isinstance(node, dict):
            return None
        node = node.get(p)
    return node


def _items(node) -> list[tuple[str, object]]:
    return [(str(k), v) for k, v in node.items()] if isinstance(node, dict) else []


def to_device(path: str | Path, text: str) -> Device:
    """NVUE config → Device. Raises InputError naming the file and the NVUE path."""
    f = str(path)
    tree = load_tree(path, text)
    qos = _get(tree, "qos") or {}
    if not isinstance(qos, dict):
        qos = {}
    roce = qos.get("roce")
    roce_on = roce is not None and not (
        isinstance(roce, dict) and str(roce.get("enable", "on")) in ("off", "false")
    )
    mode = str(roce.get("mode", "lossless")) if isinstance(roce, dict) else "lossless"
    lossless = roce_on and mode.startswith("lossless")
    # DSCP → switch priority
    dscp_sp = {d: d // 8 for d in range(64)}
    for prof, body in _items(_get(qos, "mapping")) or [("default-global", {})]:
        for dl, v in _items(_get(body, "dscp")):
            sp = _get(v, "switch-priority") if isinstance(v, dict) else v
            if sp is None:
                continue
            for d in _nums(dl, 63, "DSCP", f, f"qos mapping {prof} dscp"):
                dscp_sp[d] = _nums(
                    sp, 7, "switch-priority", f, f"qos mapping {prof} dscp {dl} switch-priority"
                )[0]
    # PFC switch priorities
    pfc_sp: tuple[int, ...] = ROCE_DEFAULTS["pfc_sp"] if lossless else ()
    cable_m = ROCE_DEFAULTS["cable_m"] if lossless else None
    pfc = _get(qos, "pfc", "default-global")
    if isinstance(pfc, dict):
        if pfc.get("switch-priority") is not None:
            pfc_sp = tuple(
                _nums(
                    pfc["switch-priority"], 7, "switch-priority", f, "qos pfc default-global switch-priority"
                )
            )
        if pfc.get("cable-length") is not None:
            cable_m = _int(pfc["cable-length"], f, "qos pfc default-global cable-length", 1, 100000)
        if str(pfc.get("tx", "enable")) in ("disable", "off") or str(pfc.get("rx", "enable")) in (
            "disable",
            "off",
        ):
            pfc_sp = ()
    # SP → traffic class (queue)
    sp_tc = {sp: ROCE_DEFAULTS["sp_to_tc"].get(sp, 0) if roce_on else sp for sp in range(8)}
    for spl, v in _items(_get(qos, "egress-queue-mapping", "default-global", "switch-priority")):
        tc = _get(v, "traffic-class") if isinstance(v, dict) else v
        if tc is None:
            continue
        for sp in _nums(
            spl, 7, "switch-priority", f, "qos egress-queue-mapping default-global switch-priority"
        ):
            sp_tc[sp] = _nums(tc, 7, "traffic-class", f, f"qos egress-queue-mapping ... {spl} traffic-class")[
                0
            ]
    # ECN per traffic class
    ecn: dict[int, tuple[int, int, int] | None] = dict(ROCE_DEFAULTS["ecn"]) if roce_on else {}
    for tcl, v in _items(_get(qos, "congestion-control", "default-global", "traffic-class")):
        where = f"qos congestion-control default-global traffic-class {tcl}"
        for tc in _nums(tcl, 7, "traffic-class", f, where):
            cur = ecn.get(tc) or (150000, 1500000, 100)
            if not isinstance(v, dict):
                continue
            if str(v.get("ecn", "enable")) in ("disable", "off"):
                ecn[tc] = None
                continue
            lo = _int(v["min-threshold"], f, where + " min-threshold") if "min-threshold" in v else cur[0]
            hi = _int(v["max-threshold"], f, where + " max-threshold") if "max-threshold" in v else cur[1]
            pr = _int(v["probability"], f, where + " probability", 0, 100) if "probability" in v else cur[2]
            ecn[tc] = (lo, hi, pr)
    # egress scheduler
    sched = dict(ROCE_DEFAULTS["sched"]) if roce_on else {}
    for tcl, v in _items(_get(qos, "egress-scheduler", "default-global", "traffic-class")):
        where = f"qos egress-scheduler default-global traffic-class {tcl}"
        for tc in _nums(tcl, 7, "traffic-class", f, where):
            if not isinstance(v, dict):
                continue
            m = str(v.get("mode", "dwrr")).lower()
            bw = _int(v["bw-percent"], f, where + " bw-percent", 0, 100) if "bw-percent" in v else None
            sched[tc] = ("STRICT", None) if m == "strict" else ("DWRR", bw)
    # interfaces
    ports: dict[str, int] = {}
    for name, body in _items(_get(tree, "interface")):
        if not name.startswith("swp"):
            continue
        try:
            names = expand_ids(name, "swp")
        except ValueError:
            raise InputError(
                "bad interface range", file=f, field=f"interface {name}", allowed="swp1, swp1-32, swp1,swp3"
            ) from None
        mtu = _get(body, "link", "mtu")
        for n in names:
            ports[n] = (
                _int(mtu, f, f"interface {name} link mtu", 552, 9216) if mtu is not None else DEFAULT_MTU
            )
    if not ports:
        ports = {"swp*": DEFAULT_MTU}  # the global profile applies to every swp
    host = _get(tree, "system", "hostname")
    name = str(host) if host else Path(f).stem
    t: dict[str, dict[str, dict[str, str]]] = {
        "DEVICE_METADATA": {"localhost": {"hostname": name, "platform": "nvue"}},
        "PORT": {p: {"mtu": str(m)} for p, m in ports.items()},
        "DSCP_TO_TC_MAP": {"default-global": {str(d): str(sp) for d, sp in dscp_sp.items()}},
        "TC_TO_QUEUE_MAP": {"default-global": {str(sp): str(tc) for sp, tc in sp_tc.items()}},
        "PORT_QOS_MAP": {},
        "QUEUE": {},
        "WRED_PROFILE": {},
        "SCHEDULER": {},
    }
    for tc, v in ecn.items():
        if v is not None:
            t["WRED_PROFILE"][str(tc)] = {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "green_min_threshold": str(v[0]),
                "green_max_threshold": str(v[1]),
                "green_drop_probability": str(v[2]),
            }
    for tc, (typ, w) in sched.items():
        t["SCHEDULER"][str(tc)] = {"type": typ, **({"weight": str(w)} if w is not None else {})}
    for p in ports:
        t["PORT_QOS_MAP"][p] = {
            "dscp_to_tc_map": "default-global",
            "tc_to_queue_map": "default-global",
            "pfc_enable": ",".join(map(str, pfc_sp)),
        }
        for q in range(8):
            entry = {}
            if str(q) in t["WRED_PROFILE"]:
                entry["wred_profile"] = str(q)
            if str(q) in t["SCHEDULER"]:
                entry["scheduler"] = str(q)
            if entry:
                t["QUEUE"][f"{p}|{q}"] = entry
    if cable_m is not None:
        t["CABLE_LENGTH"] = {"default-global": {p: f"{cable_m}m" for p in ports}}
    t = {k: v for k, v in t.items() if v}
    return Device(name=name, files=[f], tables=t, dialect="nvue", native=dict(NATIVE))


def looks_like_nvue(text: str) -> bool:
    head = text[:20000]
    return bool(
        re.search(r"^\s*(\S*\$\s+)?nv set ", head, re.M)
        or (
            re.search(r"^-?\s*set:\s*$", head, re.M) and re.search(r"^\s+(qos|interface|system):", head, re.M)
        )
        or re.search(r"nvue-api-version", head)
    )

"""InfiniBand, for symmetry: links running below their width or speed, from ``ibnetdiscover`` or
``iblinkinfo`` output (formats.md §2.4, §2.5).

* ``ibnetdiscover``: every port line ends in ``<width>x<speed>`` (``4xNDR``). A link is degraded
  when its width or speed is below the most common one of links of the same kind (switch–switch,
  switch–host) in the dump — a 4X port trained at 2X, an NDR port at HDR. Split ports (``2xNDR``
  everywhere) are their own majority and are not flagged.
* ``iblinkinfo``: the trailing ``( Could be 4X Could be 106.25 Gbps )`` is iblinkinfo's own
  "runs below its capability" note, reported as is.
* ``opensm.conf`` (the subnet manager's ``key value`` lines): the routing engine and whether it is
  an adaptive-routing one. OpenSM tries the comma-separated ``routing_engine`` list in order and
  falls back to ``minhop`` when none applies or the key is unset; NVIDIA's SM (UFM) names its
  adaptive-routing engines ``ar_*`` (``routing_engine ar_updn`` in UFM's opensm.conf).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from aifabric.audit.rules import Finding
from aifabric.errors import InputError
from aifabric.topology.io import IB_GBPS_PER_LANE, parse_ibnetdiscover

_SPEEDS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
_ILI = re.compile(r"^\s*(?:0x[0-9a-f]+\s+)?(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(.*?)\)==>\s+(.*)$")


@dataclass(frozen=True)
class IbLink:
    a: str
    a_port: int
    b: str
    b_port: int
    width: int
    speed: str
    kind: str  # switch-switch | switch-host

    @property
    def gbps(self) -> float:
        return self.width * IB_GBPS_PER_LANE[self.speed]


_SM_KEYS = re.compile(
    r"^\s*(routing_engine|sm_priority|max_op_vls|max_operational_vls|lmc|use_ucast_cache|qos|"
    r"root_guid_file|log_flags|sweep_interval|scatter_ports|routing_threads_num)\s+\S",
    re.M,
)


def kind_of(text: str) -> str | None:
    head = text[:20000]
    keys = set(_SM_KEYS.findall(head)) - {"qos"}
    if len(keys) >= 2 or "routing_engine" in keys:
        return "opensm"
    if re.search(r"^(Switch|Ca)\s+\d+\s+\"[SH]-", head, re.M) and ("guid=" in head or "vendid=" in head):
        return "ibnetdiscover"
    if re.search(r"==\(.*\)==>", head) and re.search(r"^(CA|Switch):", head, re.M):
        return "iblinkinfo"
    return None


def read_ibnetdiscover(path: str | Path, text: str) -> list[IbLink]:
    """The dump's links (each once, as the first end to report it with a width and speed gives it),
    parsed by the topology reader's :func:`~aifabric.topology.io.parse_ibnetdiscover`."""
    f = str(path)
    nodes, ports = parse_ibnetdiscover(text, f)
    links: dict[tuple, IbLink] = {}
    for p in ports:
        if not p.lanes:
            continue
        (a, ap), (b, bp) = key = p.key
        cur, peer = p.end[0], p.peer[0]
        kind = "switch-switch" if cur.startswith("S-") and peer.startswith("S-") else "switch-host"
        links.setdefault(key, IbLink(a, ap, b, bp, p.lanes, p.speed, kind))
    if not nodes:
        raise InputError("no Switch/Ca node blocks found", file=f, allowed="ibnetdiscover output")
    desc = {k: v[1] for k, v in nodes.items()}
    return [
        IbLink(desc.get(x.a, x.a), x.a_port, desc.get(x.b, x.b), x.b_port, x.width, x.speed, x.kind)
        for x in links.values()
    ]


def read_opensm_conf(path: str | Path, text: str) -> dict[str, str]:
    """``key value`` lines (``#`` comments) → dict. Raises InputError for a line without a value."""
    f = str(path)
    out: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.split("#", 1)[0].strip()
        if not s:
            continue
        parts = s.split(None, 1)
        if len(parts) != 2 or not re.fullmatch(r"[a-z][a-z0-9_]*", parts[0]):
            raise InputError(
                "unreadable line", file=f, field=f"line {lineno}", value=s[:60], allowed="'key value' lines"
            )
        out[parts[0]] = parts[1].strip()
    return out


def sm_findings(path: str | Path, text: str) -> tuple[list[Finding], dict]:
    f = str(path)
    conf = read_opensm_conf(path, text)
    raw = conf.get("routing_engine", "(null)")
    engines = [e.strip() for e in raw.split(",") if e.strip() and e.strip() != "(null)"]
    first = engines[0] if engines else "minhop"
    ar = first.startswith("ar_")
    summary = {
        "file": f,
        "format": "opensm.conf",
        "routing_engine": ",".join(engines) or "minhop (default)",
        "adaptive_routing": ar,
    }
    out: list[Finding] = []
    if not ar:
        out.append(
            Finding(
                "ib-sm-routing",
                "info",
                Path(f).stem,
                "opensm.conf|routing_engine",
                f"routing engine {first}{' (unset: the default)' if not engines else ''}: adaptive routing is off, "
                "so each flow keeps one static path (hash collisions on the spine links are not avoided)",
                {"routing_engine": raw, "adaptive_routing": "false"},
                "use an adaptive-routing engine where the switches support it (e.g. routing_engine ar_updn on "
                "Quantum switches managed by UFM), or check that static routing is intended",
            )
        )
    return out, summary


def ib_findings(path: str | Path, text: str) -> tuple[list[Finding], dict]:
    """Findings and a summary for one ibnetdiscover / iblinkinfo / opensm.conf file. Raises InputError."""
    f = str(path)
    name = Path(f).stem
    kind = kind_of(text)
    out: list[Finding] = []
    if kind == "opensm":
        return sm_findings(path, text)
    if kind == "iblinkinfo":
        n = 0
        cur = "?"
        for line in text.splitlines():
            if line.startswith(("CA:", "Switch:")):
                cur = line.split(":", 1)[1].strip().rstrip(":")
                continue
            m = _ILI.match(line)
            if not m:
                continue
            n += 1
            could = re.findall(r"Could be ([^()]+?)(?=\s+Could be|\s*\)\s*$)", line)
            if could and "Active" in m.group(3):
                out.append(
                    Finding(
                        "ib-link-degraded",
                        "warning",
                        name,
                        f"{cur}[{m.group(2)}]",
                        f"link runs at {' '.join(m.group(3).split()[:3])}; iblinkinfo says it could be "
                        + ", ".join(c.strip() for c in could),
                        {
                            "state": " ".join(m.group(3).split()),
                            "could_be": "; ".join(c.strip() for c in could),
                        },
                        "reseat or replace the cable/transceiver, check the port's configured width and speed",
                    )
                )
        return out, {"file": f, "format": "iblinkinfo", "links": n, "degraded": len(out)}
    links = read_ibnetdiscover(path, text)
    summary: dict = {"file": f, "format": "ibnetdiscover", "links": len(links), "degraded": 0, "by_kind": {}}
    for k in ("switch-switch", "switch-host"):
        ls = [x for x in links if x.kind == k]
        if not ls:
            continue
        widths = Counter(x.width for x in ls)
        speeds = Counter(x.speed for x in ls)
        w0, s0 = widths.most_common(1)[0][0], speeds.most_common(1)[0][0]
        summary["by_kind"][k] = {"links": len(ls), "width": f"{w0}x", "speed": s0}
        for x in ls:
            slow = _SPEEDS.index(x.speed) < _SPEEDS.index(s0)
            if x.width < w0 or slow:
                what = []
                if x.width < w0:
                    what.append(f"{x.width}x instead of {w0}x")
                if slow:
                    what.append(f"{x.speed} instead of {s0}")
                out.append(
                    Finding(
                        "ib-link-degraded",
                        "warning",
                        name,
                        f"{x.a}[{x.a_port}]--{x.b}[{x.b_port}]",
                        f"{k} link at {x.width}x{x.speed} ({' and '.join(what)}, the fabric's {k} links): "
                        f"{x.gbps:g} Gb/s instead of {w0 * IB_GBPS_PER_LANE[s0]:g}",
                        {"width": f"{x.width}x", "speed": x.speed, "majority": f"{w0}x{s0}", "kind": k},
                        "reseat or replace the cable/transceiver; iblinkinfo shows what the port could run at",
                    )
                )
    summary["degraded"] = len(out)
    return out, summary


IB_RULES = {
    "ib-link-degraded": ("warning", "an InfiniBand link trained below the fabric's width or speed"),
    "ib-sm-routing": (
        "info",
        "the subnet manager's routing engine is not an adaptive-routing one (opensm.conf)",
    ),
}

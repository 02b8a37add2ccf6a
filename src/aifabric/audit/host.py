"""Host-side RoCE settings, cross-checked with the switches.

Readers (each returns what it found; a file may hold several of them one after the other):

* ``mlnx_qos -i IF`` (Mellanox/mlnx-tools ``pretty_print``, formats.md §3.1): trust state,
  ``dscp2prio`` mapping, PFC ``enabled`` row, ``Cable len``, ``tc: N ... tsa:`` lines;
* ``mlxconfig -d DEV query``: ``CNP_DSCP_P<n>``, ``CNP_802P_PRIO_P<n>``, ``ROCE_CC_PRIO_MASK_P<n>``
  (values printed as ``48`` or ``True(1)``);
* sysfs ECN: ``/sys/class/net/IF/ecn/roce_np|roce_rp/enable/P`` followed by ``:V`` (``grep -H .``)
  or ``= V``;
* the NCCL environment: ``NCCL_IB_TC``, ``NCCL_IB_GID_INDEX``, ``NCCL_IB_SL`` as ``[export ]K=V``
  lines, and the mlx5 global override ``Global tclass=N`` (``/sys/class/infiniband/DEV/tc/1/traffic_class``).

The RoCE DSCP a host sends is ``NCCL_IB_TC >> 2`` (the ToS byte: DSCP in the upper six bits), or
the global tclass override, or ``--nic-dscp``. ``NCCL_IB_TC`` left unset sends RoCE with ToS 0,
i.e. DSCP 0, which the switches usually treat as lossy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from aifabric.audit.rules import Finding
from aifabric.errors import InputError

_SYSFS = re.compile(r"/sys/class/net/([^/\s]+)/ecn/roce_(np|rp)/enable/([0-7])\s*(?::|=)\s*([01])\b")
_ENV = re.compile(r"^\s*(?:export\s+)?(NCCL_[A-Z0-9_]+)\s*=\s*(\S*)\s*(?:#.*)?$")
_TCLASS = re.compile(r"Global tclass=(\d+)")
_ECHO = re.compile(r"^echo\s+([01])\s*>\s*/sys/class/net/([^/\s]+)/ecn/roce_(np|rp)/enable/([0-7])\s*$")
_MLNX_QOS_CMD = re.compile(r"^mlnx_qos\s+(?:-i|--interface)[ =](\S+)\s+(.*)$")


@dataclass
class Host:
    name: str
    files: list[str]
    interface: str | None = None
    trust: str | None = None
    dscp2prio: dict[int, int] | None = None
    pfc: tuple[int, ...] | None = None
    cable_len_m: int | None = None
    tc_tsa: dict[int, str] = field(default_factory=dict)
    cnp_dscp: int | None = None
    cnp_prio: int | None = None
    cc_prio_mask: int | None = None
    ecn_np: dict[int, bool] = field(default_factory=dict)
    ecn_rp: dict[int, bool] = field(default_factory=dict)
    nccl: dict[str, str] | None = None
    global_tclass: int | None = None
    key_line: dict[str, tuple[str, int]] = field(default_factory=dict)  # what → (file, line)
    kind_files: dict[str, str] = field(default_factory=dict)  # mlnx_qos | mlxconfig | sysfs | nccl-env → file

    def file_for(self, obj: str) -> str:
        """The file a finding's object (``mlnx_qos|...``, ``nccl-env|...``) was read from."""
        return self.kind_files.get(obj.split("|", 1)[0]) or self.files[0]

    def roce_dscp(self, stated: int | None = None) -> tuple[int | None, str]:
        """(DSCP the host's RoCE traffic uses, where that comes from)."""
        if self.global_tclass is not None:
            return self.global_tclass >> 2, f"global tclass {self.global_tclass}"
        if self.nccl is not None:
            tc = self.nccl.get("NCCL_IB_TC")
            if tc is None or tc == "":
                return 0, "NCCL_IB_TC unset (ToS 0)"
            return int(tc) >> 2, f"NCCL_IB_TC={tc}"
        if stated is not None:
            return stated, "--nic-dscp"
        return None, ""

    def prio_of(self, dscp: int) -> int | None:
        if self.trust != "dscp":
            return None
        m = {d: d // 8 for d in range(64)}  # the NIC default; a printed or set mapping overrides it
        m.update(self.dscp2prio or {})
        return m.get(dscp, 0)

    def to_dict(self) -> dict:
        d, src = self.roce_dscp()
        return {
            "files": list(self.files),
            "trust": self.trust,
            "pfc_enabled": list(self.pfc) if self.pfc is not None else None,
            "roce_dscp": d,
            "roce_dscp_source": src or None,
            "cnp_dscp": self.cnp_dscp,
            "cnp_priority": self.cnp_prio,
            "ecn_np_enabled": sorted(p for p, v in self.ecn_np.items() if v) if self.ecn_np else None,
            "ecn_rp_enabled": sorted(p for p, v in self.ecn_rp.items() if v) if self.ecn_rp else None,
        }


def kind_of(text: str) -> str | None:
    """Which host reader a text is for (``host`` when any matches), else None."""
    head = text[:50000]
    if (
        "Priority trust state:" in head
        or re.search(r"^mlnx_qos\s+(-i|--interface)", head, re.M)
        or re.search(r"^\s*PFC configuration:", head, re.M)
        or (
            "Configurations:" in head and re.search(r"\b(CNP_DSCP|CNP_802P_PRIO|ROCE_CC_PRIO_MASK)_P\d", head)
        )
        or _SYSFS.search(head)
        or _TCLASS.search(head)
        or re.search(r"^\s*(?:export\s+)?NCCL_[A-Z0-9_]+\s*=", head, re.M)
    ):
        return "host"
    return None


def _int_val(v: str) -> int | None:
    m = re.search(r"\((\d+)\)\s*$", v) or re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)", v.strip())
    if not m:
        return None
    s = m.group(1)
    return int(s, 16) if s.startswith("0x") else int(s)


def read_into(h: Host, path: str | Path, text: str) -> None:
    """Parse one host file into ``h``. Raises InputError naming the file, line and field."""
    f = str(path)
    lines = text.splitlines()
    in_pfc = False
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        if s.startswith("Priority trust state:"):
            v = s.split(":", 1)[1].strip().lower()
            if v not in ("dscp", "pcp"):
                raise InputError(
                    "bad trust state", file=f, field=f"line {lineno}", value=v, allowed="dscp, pcp"
                )
            h.trust = v
            h.key_line["trust"] = (f, lineno)
            continue
        m = re.match(r"prio:\s*(\d)\s+dscp:\s*([\d,\s]*)$", s)
        if m:
            h.dscp2prio = h.dscp2prio or {}
            for x in m.group(2).replace(" ", "").strip(",").split(","):
                if x:
                    if not x.isdigit() or int(x) > 63:
                        raise InputError("bad DSCP", file=f, field=f"line {lineno}", value=x, allowed="0..63")
                    h.dscp2prio[int(x)] = int(m.group(1))
            h.key_line.setdefault("dscp2prio", (f, lineno))
            continue
        if s.startswith("Cable len:"):
            v = s.split(":", 1)[1].strip()
            if not v.isdigit():
                raise InputError(
                    "bad cable length", file=f, field=f"line {lineno}", value=v, allowed="metres"
                )
            h.cable_len_m = int(v)
            continue
        if s.startswith("PFC configuration"):
            in_pfc = True
            continue
        if in_pfc and s.startswith("enabled"):
            cols = s.split()[1:]
            if len(cols) != 8 or any(c not in ("0", "1") for c in cols):
                raise InputError(
                    "bad PFC enabled row",
                    file=f,
                    field=f"line {lineno}",
                    value=s[:60],
                    allowed="eight 0/1 columns",
                )
            h.pfc = tuple(i for i, c in enumerate(cols) if c == "1")
            h.key_line["pfc"] = (f, lineno)
            continue
        m = re.match(r"tc:\s*(\d)\s.*tsa:\s*(\w+)", s)
        if m:
            in_pfc = False
            h.tc_tsa[int(m.group(1))] = m.group(2)
            continue
        m = re.match(r"(CNP_DSCP|CNP_802P_PRIO|ROCE_CC_PRIO_MASK)_P(\d)\s+(\S+)", s)
        if m:
            if m.group(2) != "1":
                continue  # port 1 only (one host file per port)
            v = _int_val(m.group(3))
            top = {"CNP_DSCP": 63, "CNP_802P_PRIO": 7, "ROCE_CC_PRIO_MASK": 255}[m.group(1)]
            if v is None or not 0 <= v <= top:
                raise InputError(
                    "bad value",
                    file=f,
                    field=f"{m.group(1)}_P1 (line {lineno})",
                    value=m.group(3),
                    allowed=f"0..{top}",
                )
            if m.group(1) == "CNP_DSCP":
                h.cnp_dscp = v
                h.key_line["cnp"] = (f, lineno)
            elif m.group(1) == "CNP_802P_PRIO":
                h.cnp_prio = v
            else:
                h.cc_prio_mask = v
            continue
        m = _MLNX_QOS_CMD.match(s)
        if m:  # the setup commands (roce-config --os host) say what the state will be
            h.interface = h.interface or m.group(1)
            _read_mlnx_qos_cmd(h, m.group(2), f, lineno)
            continue
        m = _ECHO.match(s)
        if m:
            h.interface = h.interface or m.group(2)
            (h.ecn_np if m.group(3) == "np" else h.ecn_rp)[int(m.group(4))] = m.group(1) == "1"
            h.key_line.setdefault("ecn", (f, lineno))
            continue
        if s.startswith("mlxconfig ") and " set " in f" {s} ":
            for k, v in re.findall(r"\b(CNP_DSCP|CNP_802P_PRIO|ROCE_CC_PRIO_MASK)_P1=(\S+)", s):
                iv = _int_val(v)
                top = {"CNP_DSCP": 63, "CNP_802P_PRIO": 7, "ROCE_CC_PRIO_MASK": 255}[k]
                if iv is None or not 0 <= iv <= top:
                    raise InputError(
                        "bad value", file=f, field=f"{k}_P1 (line {lineno})", value=v, allowed=f"0..{top}"
                    )
                if k == "CNP_DSCP":
                    h.cnp_dscp = iv
                    h.key_line["cnp"] = (f, lineno)
                elif k == "CNP_802P_PRIO":
                    h.cnp_prio = iv
                else:
                    h.cc_prio_mask = iv
            continue
        m = _SYSFS.search(s)
        if m:
            h.interface = h.interface or m.group(1)
            (h.ecn_np if m.group(2) == "np" else h.ecn_rp)[int(m.group(3))] = m.group(4) == "1"
            h.key_line.setdefault("ecn", (f, lineno))
            continue
        m = _TCLASS.search(s)
        if m:
            v = int(m.group(1))
            if v > 255:
                raise InputError("bad tclass", file=f, field=f"line {lineno}", value=v, allowed="0..255")
            h.global_tclass = v
            h.key_line["tclass"] = (f, lineno)
            continue
        m = _ENV.match(raw)
        if m:
            k, v = m.group(1), m.group(2).strip("'\"")
            h.nccl = h.nccl if h.nccl is not None else {}
            if k in ("NCCL_IB_TC", "NCCL_IB_GID_INDEX", "NCCL_IB_SL") and v and not v.isdigit():
                raise InputError("not an integer", file=f, field=k, value=v, allowed="a decimal integer")
            if k == "NCCL_IB_TC" and v and int(v) > 255:
                raise InputError("out of range", file=f, field=k, value=v, allowed="0..255 (the IP ToS byte)")
            if k == "NCCL_IB_SL" and v and int(v) > 15:
                raise InputError("out of range", file=f, field=k, value=v, allowed="0..15")
            h.nccl[k] = v
            h.key_line.setdefault(k, (f, lineno))
            continue
        if re.match(r"^\s*(?:export\s+)?[A-Z_][A-Z0-9_]*\s*=", raw):
            h.nccl = h.nccl if h.nccl is not None else {}  # other environment variables: an env file
            continue
    kinds = {
        "mlnx_qos": r"Priority trust state:|PFC configuration|^mlnx_qos\s",
        "mlxconfig": r"\b(CNP_DSCP|CNP_802P_PRIO|ROCE_CC_PRIO_MASK)_P\d",
        "sysfs": r"/ecn/roce_(np|rp)/enable/|Global tclass=",
        "nccl-env": r"^\s*(?:export\s+)?NCCL_[A-Z0-9_]+\s*=",
    }
    for kind, pat in kinds.items():
        if re.search(pat, text, re.M):
            h.kind_files.setdefault(kind, f)
    if h.trust == "dscp" and h.dscp2prio is None and any("dscp2prio" in ln for ln in lines):
        h.dscp2prio = {}


def _read_mlnx_qos_cmd(h: Host, args: str, f: str, lineno: int) -> None:
    toks = args.replace("=", " ").split()
    i = 0
    while i < len(toks):
        t, v = toks[i], toks[i + 1] if i + 1 < len(toks) else ""
        if t == "--trust":
            if v not in ("dscp", "pcp"):
                raise InputError("bad --trust", file=f, field=f"line {lineno}", value=v, allowed="dscp, pcp")
            h.trust = v
            h.key_line["trust"] = (f, lineno)
        elif t in ("--pfc", "-f"):
            cols = v.split(",")
            if len(cols) != 8 or any(c not in ("0", "1") for c in cols):
                raise InputError(
                    "bad --pfc", file=f, field=f"line {lineno}", value=v, allowed="eight 0/1 values"
                )
            h.pfc = tuple(k for k, c in enumerate(cols) if c == "1")
            h.key_line["pfc"] = (f, lineno)
        elif t == "--dscp2prio":
            m = re.fullmatch(r"set,(\d+),(\d)", v)
            if not m or int(m.group(1)) > 63 or int(m.group(2)) > 7:
                raise InputError(
                    "bad --dscp2prio",
                    file=f,
                    field=f"line {lineno}",
                    value=v,
                    allowed="set,DSCP(0..63),PRIO(0..7)",
                )
            h.dscp2prio = h.dscp2prio if h.dscp2prio is not None else {}
            h.dscp2prio[int(m.group(1))] = int(m.group(2))
            h.key_line.setdefault("dscp2prio", (f, lineno))
        else:
            i += 1
            continue
        i += 2


def load_host(paths: list[Path], name: str) -> Host:
    h = Host(name=name, files=[str(p) for p in paths])
    from aifabric.memory import read_text

    for p in paths:
        if Path(p).exists():
            read_text(Path(p), "host file", bytes_per_byte=40)  # a regular file (not /dev/zero)
        try:
            text = Path(p).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError("no such file", file=str(p)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read: {exc.__class__.__name__}", file=str(p)) from None
        read_into(h, p, text)
    return h


# ---------------------------------------------------------------------------------------------
# rules: the host against itself and against the switches' inferred RoCE classes
def _switch_view(devices, dscp: int) -> tuple[list[str], list[str], set[int]]:
    """Switches where ``dscp`` is lossless on every lossless port, where it is lossy on some, and
    the switch priorities (TCs) it reaches where lossless."""
    from aifabric.audit.infer import dscp_lossless, tc_of

    ok, bad, prios = [], [], set()
    for d in devices:
        lp = d.lossless_ports()
        states = [(p, dscp_lossless(d, p, dscp)) for p in lp]
        states = [(p, s) for p, s in states if s is not None]
        if not states:
            continue
        if all(s for _, s in states):
            ok.append(d.name)
            prios.update(tc_of(d, p, dscp)[1] for p, _ in states)
        else:
            bad.append(d.name)
    return ok, bad, prios


def host_findings(
    hosts: list[Host], devices, *, intent: str = "auto", nic_dscp: int | None = None
) -> list[Finding]:
    out: list[Finding] = []
    switch_lossless = {p for d in devices for v in d.lossless_ports().values() for p in v}
    for h in hosts:
        obj_iface = h.interface or "host"
        lossy_root = False  # the RoCE DSCP itself is lossy: the priority checks below would repeat it
        if h.trust == "pcp" and switch_lossless:
            out.append(
                Finding(
                    "host-trust-not-dscp",
                    "error",
                    h.name,
                    f"mlnx_qos|{obj_iface}|trust",
                    "NIC trust state is pcp while the switches classify RoCE by DSCP: untagged RoCE frames "
                    "land in priority 0 on the NIC, whose PFC state then decides pause handling",
                    {"trust": "pcp"},
                    f"mlnx_qos -i {obj_iface} --trust dscp",
                )
            )
        dscp, src = h.roce_dscp(nic_dscp)
        if dscp is not None and devices:
            ok, bad, prios = _switch_view(devices, dscp)
            if bad:
                lossy_root = True
                why = (
                    "NCCL_IB_TC is unset, so RoCE goes out with ToS 0 (DSCP 0)"
                    if src.startswith("NCCL_IB_TC unset")
                    else f"the host sends DSCP {dscp} ({src})"
                )
                out.append(
                    Finding(
                        "host-roce-dscp-lossy",
                        "error",
                        h.name,
                        f"nccl-env|{'NCCL_IB_TC' if 'NCCL' in src else src}",
                        f"{why}, lossy on {len(bad)} switch(es) ({', '.join(bad[:4])})",
                        {"roce_dscp": str(dscp), "source": src, "lossy_on": ",".join(bad)},
                        "export NCCL_IB_TC=<4 × a lossless DSCP> (106 = DSCP 26 with ECT, the NVIDIA convention), "
                        "matching the switches' RoCE classes",
                    )
                )
            hp = h.prio_of(dscp)
            if not lossy_root and h.pfc is not None and hp is not None and ok and prios and hp not in prios:
                out.append(
                    Finding(
                        "host-priority-mismatch",
                        "error",
                        h.name,
                        f"mlnx_qos|{obj_iface}|dscp2prio",
                        f"the NIC puts DSCP {dscp} in priority {hp}; the switches pause it as priority "
                        f"{','.join(map(str, sorted(prios)))}",
                        {
                            "dscp": str(dscp),
                            "nic_priority": str(hp),
                            "switch_priorities": ",".join(map(str, sorted(prios))),
                        },
                        f"mlnx_qos -i {obj_iface} --dscp2prio set,{dscp},{min(prios)}",
                    )
                )
            if not lossy_root and h.pfc is not None and hp is not None and hp not in h.pfc:
                out.append(
                    Finding(
                        "host-pfc-mismatch",
                        "error",
                        h.name,
                        f"mlnx_qos|{obj_iface}|pfc",
                        f"PFC is off on the NIC for priority {hp}, which carries RoCE (DSCP {dscp}): the NIC ignores "
                        "the switch's PAUSE frames for it",
                        {"pfc_enabled": ",".join(map(str, h.pfc)) or "none", "roce_priority": str(hp)},
                        f"mlnx_qos -i {obj_iface} --pfc "
                        + ",".join("1" if i == hp else "0" for i in range(8)),
                    )
                )
        if h.pfc is not None and switch_lossless and devices:
            extra = sorted(set(h.pfc) - switch_lossless)
            if extra:
                out.append(
                    Finding(
                        "host-pfc-mismatch",
                        "warning",
                        h.name,
                        f"mlnx_qos|{obj_iface}|pfc",
                        f"PFC enabled on NIC priority {','.join(map(str, extra))}, lossless on no audited switch: "
                        "the NIC may pause the switch for a class the switch drops anyway",
                        {
                            "pfc_enabled": ",".join(map(str, h.pfc)),
                            "switch_lossless": ",".join(map(str, sorted(switch_lossless))),
                        },
                        "enable PFC on the NIC only for the switches' lossless priorities",
                    )
                )
        if dscp is not None and not lossy_root and (h.ecn_np or h.ecn_rp):
            hp = h.prio_of(dscp)
            hp = hp if hp is not None else (dscp // 8)
            off = [k for k, m in (("roce_np", h.ecn_np), ("roce_rp", h.ecn_rp)) if m and not m.get(hp, False)]
            if off:
                sev = {"dcqcn": "error", "pfc-only": "info"}.get(intent, "warning")
                out.append(
                    Finding(
                        "host-ecn-disabled",
                        sev,
                        h.name,
                        f"sysfs|{h.interface or 'IF'}|ecn/{'+'.join(off)}/enable/{hp}",
                        f"DCQCN {' and '.join(off)} is off for RoCE priority {hp}: the NIC "
                        + ("sends no CNPs" if "roce_np" in off else "ignores CNPs"),
                        {"priority": str(hp), "intent": intent},
                        f"echo 1 > /sys/class/net/{h.interface or 'IF'}/ecn/<roce_np|roce_rp>/enable/{hp}",
                    )
                )
        if h.cnp_dscp is not None and h.cc_prio_mask is not None and dscp is not None:
            hp = h.prio_of(dscp)
            if hp is not None and not (h.cc_prio_mask >> hp) & 1:
                out.append(
                    Finding(
                        "host-ecn-disabled",
                        {"dcqcn": "error", "pfc-only": "info"}.get(intent, "warning"),
                        h.name,
                        "mlxconfig|ROCE_CC_PRIO_MASK_P1",
                        f"ROCE_CC_PRIO_MASK_P1 {h.cc_prio_mask:#x} leaves congestion control off on RoCE priority {hp}",
                        {"mask": f"{h.cc_prio_mask:#x}", "priority": str(hp)},
                        "mlxconfig -d <dev> set ROCE_CC_PRIO_MASK_P1=255",
                    )
                )
        if h.nccl is not None and "NCCL_IB_GID_INDEX" not in h.nccl:
            out.append(
                Finding(
                    "host-nccl-gid-index",
                    "info",
                    h.name,
                    "nccl-env|NCCL_IB_GID_INDEX",
                    "NCCL_IB_GID_INDEX is unset: NCCL ≥ 2.21 picks a RoCE v2 IPv4 GID itself; older NCCL uses GID 0 "
                    "(RoCE v1, no DSCP, not routable)",
                    {},
                    "export NCCL_IB_GID_INDEX=<the RoCE v2 IPv4 GID index from show_gids>, or check the NCCL version",
                )
            )
    return out


HOST_RULES = {
    "host-trust-not-dscp": ("error", "the NIC trusts PCP while the fabric classifies RoCE by DSCP"),
    "host-roce-dscp-lossy": (
        "error",
        "the DSCP a host sends RoCE with (NCCL_IB_TC, tclass, --nic-dscp; unset = 0) is lossy on a switch",
    ),
    "host-priority-mismatch": ("error", "the NIC maps the RoCE DSCP to another priority than the switches"),
    "host-pfc-mismatch": (
        "error",
        "PFC off on the NIC for the RoCE priority (warning: on for a priority no switch keeps lossless)",
    ),
    "host-ecn-disabled": (
        "warning",
        "DCQCN (sysfs roce_np/roce_rp, ROCE_CC_PRIO_MASK) off for the RoCE priority (error under --intent dcqcn)",
    ),
    "host-nccl-gid-index": ("info", "NCCL_IB_GID_INDEX unset"),
}

"""Device and port names of a built fabric: one convention, used by every artefact.

Convention (lower case, hyphen separated, numbers 1-based and zero-padded so names sort in order):

* Servers: ``node{n:03d}`` (``node001`` …, four digits from 1,000 servers). A GPU's scale-out NIC
  port is ``mlx5_{rail}`` (the RDMA device name NVIDIA DGX/HGX systems give the rail-``rail`` NIC);
  with several planes the NIC's ports are ``mlx5_{rail}/{plane + 1}``.
* Leaves: ``leaf-su{su:02d}-r{rail}`` (the rail-``rail`` leaf of scalable unit ``su``); a
  one-switch fabric's switch is ``leaf-01``.
* Spines: ``spine-{i:02d}`` (2 tiers) or ``pod{pod}-spine-{i:02d}`` (3 tiers); cores ``core-{i:02d}``.
* Planes: with several planes every switch name starts with ``p{plane}-`` (``p0-leaf-su01-r0``).
* Switch ports: InfiniBand ports are the numbers ``ibnetdiscover`` prints (``1`` … radix; cage
  ``c`` holds ports ``(c-1)·k+1 … c·k`` with ``k`` ports per cage); Ethernet ports are Cumulus Linux /
  NVUE names, ``swp{cage}`` or ``swp{cage}s{i}`` for breakout port ``i`` (0-based) of a cage.
* Slurm / Kubernetes group names: ``su{su:02d}`` (the rail leaves of one scalable unit),
  ``nvl{d:03d}`` (an NVLink domain), ``spines`` / ``pod{pod}`` / ``cores``.

Hostlist expressions (``node[001-032,040]``) follow Slurm's syntax (topology.conf(5): "Slurm's
hostlist expression parser is used", e.g. ``tux[0-3,12,18-20]``); :func:`hostlist` writes them and
:func:`expand_hostlist` reads them back.
"""

from __future__ import annotations

import re


def width(count: int) -> int:
    """Digits of the zero-padded numbers of ``count`` items (at least 3)."""
    return max(3, len(str(max(count, 1))))


def server(node: int, nodes: int) -> str:
    return f"node{node + 1:0{width(nodes)}d}"


def host_port(rail: int, plane: int, planes: int) -> str:
    return f"mlx5_{rail}" if planes <= 1 else f"mlx5_{rail}/{plane + 1}"


def _pre(plane: int, planes: int) -> str:
    return f"p{plane}-" if planes > 1 else ""


def leaf(plane: int, planes: int, su: int | None, rail: int | None) -> str:
    if su is None or rail is None or rail < 0:
        return f"{_pre(plane, planes)}leaf-01"
    return f"{_pre(plane, planes)}leaf-su{su + 1:02d}-r{rail}"


def spine(plane: int, planes: int, i: int, pod: int | None = None) -> str:
    body = f"spine-{i + 1:02d}" if pod is None else f"pod{pod + 1}-spine-{i + 1:02d}"
    return _pre(plane, planes) + body


def core(plane: int, planes: int, i: int) -> str:
    return f"{_pre(plane, planes)}core-{i + 1:02d}"


def switch_port(technology: str, port: int, ports_per_cage: int) -> str:
    """Name of logical port ``port`` (0-based) of a switch."""
    if technology == "infiniband":
        return str(port + 1)
    cage, sub = divmod(port, max(1, ports_per_cage))
    return f"swp{cage + 1}" if ports_per_cage <= 1 else f"swp{cage + 1}s{sub}"


def cage_of(port: int, ports_per_cage: int) -> int:
    """1-based cage of logical port ``port`` (0-based)."""
    return port // max(1, ports_per_cage) + 1


_NUM = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: list[str]) -> str:
    """Compress names into a Slurm hostlist expression: ``node001,node002,node004`` →
    ``node[001-002,004]``. Names keep their order of first appearance per prefix; a name without a
    trailing number stays as it is."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    order: list[tuple[str, int] | str] = []
    for nm in names:
        m = _NUM.match(nm)
        if not m:
            if nm not in plain:
                plain.append(nm)
                order.append(nm)
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)))
    out = []
    for key in order:
        if isinstance(key, str):
            out.append(key)
            continue
        prefix, w = key
        nums = sorted(set(groups[key]))
        if len(nums) == 1:
            out.append(f"{prefix}{nums[0]:0{w}d}")
            continue
        ranges, start, prev = [], nums[0], nums[0]
        for x in nums[1:] + [None]:
            if x is not None and x == prev + 1:
                prev = x
                continue
            ranges.append(f"{start:0{w}d}" if start == prev else f"{start:0{w}d}-{prev:0{w}d}")
            if x is not None:
                start = prev = x
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)


_BRACKET = re.compile(r"^([^\[\],]*)\[([^\]]+)\]([^\[\],]*)$")


def expand_hostlist(expr: str) -> list[str]:
    """Names of a Slurm hostlist expression with at most one bracket per item
    (``tux[0-3,12],sw5`` → tux0 … tux3, tux12, sw5). Raises ValueError on a malformed one."""
    items, depth, cur = [], 0, ""
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in {expr!r}")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise ValueError(f"unbalanced '[' in {expr!r}")
    items.append(cur)
    out: list[str] = []
    for item in items:
        if not item:
            raise ValueError(f"empty name in {expr!r}")
        m = _BRACKET.match(item)
        if "[" not in item and "]" not in item:
            out.append(item)
            continue
        if not m:
            raise ValueError(f"bad hostlist item {item!r}")
        pre, body, post = m.groups()
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ValueError(f"bad range {part!r} in {item!r}")
            w = len(lo)
            a, b = int(lo), int(hi) if hi else int(lo)
            if b < a:
                raise ValueError(f"descending range {part!r} in {item!r}")
            out.extend(f"{pre}{i:0{w}d}{post}" for i in range(a, b + 1))
    return out

"""Text mutations of an ``ibnetdiscover`` dump for the verify-build tests: each edits the port
lines of both ends of a link, as a miscabled or degraded fabric would report them."""

from __future__ import annotations

import re

_HDR = re.compile(r'^(Switch|Ca|Rt)\s+\d+\s+"([^"]+)"')
_PORT = re.compile(r"^\[(\d+)\]")
_PEER = re.compile(r'"([^"]+)"\[(\d+)\]')


def index(lines: list[str]) -> dict[tuple[str, int], tuple[int, tuple[str, int]]]:
    """(node id, port) → (line number, (peer id, peer port))."""
    cur, out = None, {}
    for i, line in enumerate(lines):
        m = _HDR.match(line)
        if m:
            cur = m.group(2)
            continue
        if not line.strip():
            cur = None
            continue
        m = _PORT.match(line)
        if m and cur:
            pm = _PEER.search(line[line.index("]") + 1 :])
            out[(cur, int(m.group(1)))] = (i, (pm.group(1), int(pm.group(2))))
    return out


def drop(text: str, end: tuple[str, int]) -> str:
    """Remove the link at ``end`` (both port lines)."""
    lines = text.split("\n")
    ix = index(lines)
    i, peer = ix[end]
    j, _ = ix[peer]
    return "\n".join(x for k, x in enumerate(lines) if k not in (i, j))


def _split(line: str) -> tuple[str, str]:
    k = line.index('"')
    return line[:k], line[k:]


def swap(text: str, end1: tuple[str, int], end2: tuple[str, int]) -> str:
    """Exchange the far ends of the cables at ``end1`` and ``end2``."""
    lines = text.split("\n")
    ix = index(lines)
    i1, q1 = ix[end1]
    i2, q2 = ix[end2]
    j1, j2 = ix[q1][0], ix[q2][0]
    for a, b in ((i1, i2), (j1, j2)):
        (pa, ra), (pb, rb) = _split(lines[a]), _split(lines[b])
        lines[a], lines[b] = pa + rb, pb + ra
    return "\n".join(lines)


def retag(text: str, end: tuple[str, int], old: str, new: str) -> str:
    """Replace the width/speed word of the link at ``end`` (both port lines), e.g. 4xNDR → 4xHDR."""
    lines = text.split("\n")
    ix = index(lines)
    i, peer = ix[end]
    for k in (i, ix[peer][0]):
        lines[k] = lines[k].replace(old, new)
    return "\n".join(lines)


def silence(text: str, node: str) -> str:
    """Remove node ``node``'s block and every port line that names it (a device that is off)."""
    blocks = text.split("\n\n")
    keep = [b for b in blocks if not _owns(b, node)]
    return "\n".join(x for x in "\n\n".join(keep).split("\n") if f'"{node}"[' not in x)


def _owns(block: str, node: str) -> bool:
    return any(_HDR.match(x) and _HDR.match(x).group(2) == node for x in block.split("\n"))

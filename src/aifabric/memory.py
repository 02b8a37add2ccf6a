"""Memory guard: estimate a run's memory before allocating it, refuse with one clear line.

:func:`available_bytes` is what this process may still use: the smaller of the kernel's
``MemAvailable`` and the cgroup limit's headroom (containers), or ``AIFABRIC_MEMORY_LIMIT``
(bytes or a size such as ``2GiB``) when set. :func:`check` raises :class:`MemoryLimitError` (an
:class:`~aifabric.errors.InputError`: exit 2) when an estimate exceeds :data:`USABLE_SHARE` of it.
:func:`topology_counts` sizes a scenario's topology from its spec, before building it.
"""

from __future__ import annotations

import os
from pathlib import Path

from aifabric.errors import InputError

USABLE_SHARE = 0.9  # refuse when the estimate exceeds this share of the available memory
ENV = "AIFABRIC_MEMORY_LIMIT"


class MemoryLimitError(InputError):
    """The run would need more memory than this machine has available."""


def fmt_bytes(n: float) -> str:
    for unit, f in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= f:
            return f"{n / f:.1f} {unit}"
    return f"{int(n)} B"


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def available_bytes() -> int:
    """Bytes this process can still allocate (see the module docstring)."""
    env = os.environ.get(ENV, "").strip()
    if env:
        from aifabric.units import UnitError, parse_size

        try:
            return int(parse_size(env))
        except UnitError:
            raise InputError(
                "bad memory limit", field=ENV, value=env, allowed="bytes or a size, e.g. 8GiB"
            ) from None
    best = None
    info = _read("/proc/meminfo")
    if info:
        for line in info.splitlines():
            if line.startswith("MemAvailable:"):
                best = int(line.split()[1]) * 1024
                break
    for limit_f, usage_f in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        lim, use = _read(limit_f), _read(usage_f)
        if lim and lim.isdigit() and use and use.isdigit() and int(lim) < 1 << 60:
            head = max(int(lim) - int(use), 0)
            best = head if best is None else min(best, head)
            break
    if best is None:
        try:
            best = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
            best = 1 << 62
    return int(best)


def check(need_bytes: float, what: str, field: str | None = None, hint: str | None = None) -> None:
    """Raise :class:`MemoryLimitError` if ``need_bytes`` exceeds the usable available memory."""
    avail = available_bytes()
    if need_bytes > USABLE_SHARE * avail:
        raise MemoryLimitError(
            f"{what} needs about {fmt_bytes(need_bytes)} of memory; {fmt_bytes(avail)} is available",
            field=field,
            allowed=hint or "a smaller topology or workload",
        )


def topology_counts(spec) -> tuple[int, int, int] | None:
    """``(nodes, links, hosts)`` a ``TopologySpec`` will build (an upper estimate), or ``None``
    for kinds read from a file (the file's size bounds them)."""
    k = spec.kind
    if k == "fat-tree":
        kk = spec.k
        hosts = kk**3 // 4
        return hosts + 5 * kk * kk // 4, 3 * hosts, hosts
    if k == "leaf-spine":
        hosts = spec.leaves * spec.hosts_per_leaf
        return (
            hosts + spec.leaves + spec.spines,
            hosts + spec.leaves * spec.spines * (spec.links_per_spine or 1),
            hosts,
        )
    if k == "rail-optimized":
        planes = spec.planes or 1
        return spec.gpus * (1 + planes), 4 * spec.gpus * planes, spec.gpus
    if k == "star":
        return spec.hosts + 1, spec.hosts, spec.hosts
    if k == "dumbbell":
        hosts = spec.hosts_left + spec.hosts_right
        return hosts + 2, hosts + 1, hosts
    if k == "ring":
        hosts = spec.switches * spec.hosts_per_switch
        return hosts + spec.switches, hosts + spec.switches, hosts
    return None


# bytes per node / link of a built Topology (arrays, names, adjacency) and its routing tables
NODE_BYTES = 400
LINK_BYTES = 200


def topology_bytes(spec) -> int | None:
    c = topology_counts(spec)
    if c is None:
        return None
    nodes, links, _ = c
    return nodes * NODE_BYTES + links * LINK_BYTES


def read_text(path, what: str, bytes_per_byte: int = 40, errors: str = "strict") -> str:
    """A user's text file, or one :class:`~aifabric.errors.InputError` naming it: missing or
    unreadable, not a regular file (a folder, ``/dev/zero``: reading it would never end), too big
    for memory once parsed (``bytes_per_byte`` × its size), or not UTF-8 text."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=str(path)) from None
    import stat

    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"cannot read {what}: not a regular file", file=str(path), allowed="a text file")
    check(st.st_size * bytes_per_byte, f"reading this {what} ({fmt_bytes(st.st_size)})")
    try:
        return p.read_text(encoding="utf-8", errors=errors)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not UTF-8 text (byte {exc.start})", file=str(path), allowed="a text file"
        ) from None

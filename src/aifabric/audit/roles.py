"""Switch roles for the fleet-consistency rules: which switches are supposed to be identical.

A role comes from, in order of precedence:

1. a ``--roles`` file: one ``PATTERN ROLE`` pair per line (shell glob on the device name,
   ``#`` comments), the first matching line wins;
2. ``DEVICE_METADATA|localhost`` ``type`` (``LeafRouter``, ``SpineRouter``, ``ToRRouter``...);
3. the hostname pattern: the name with every digit run replaced by ``#`` (``leaf-01`` and
   ``leaf-17`` → ``leaf-#``; ``a08-p1-leaf-04-04`` → ``a#-p#-leaf-#-#``).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from aifabric.errors import InputError

_ROLE = re.compile(r"^[A-Za-z0-9_.#-]{1,64}$")


def hostname_pattern(name: str) -> str:
    """``leaf-01`` → ``leaf-#``: the name with each run of digits replaced by ``#``."""
    return re.sub(r"[0-9]+", "#", name)


def read_roles(path: str | Path) -> list[tuple[str, str]]:
    """Parse a roles file → [(glob, role)]. Raises :class:`InputError` naming file and line."""
    from aifabric.memory import read_text

    f = str(path)
    if Path(path).exists():
        try:  # a regular file (not /dev/zero) that fits in memory
            read_text(Path(path), "roles file", bytes_per_byte=40)
        except InputError as exc:
            raise InputError(exc.problem, file=f, field="--roles", allowed=exc.allowed) from None
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", file=f, field="--roles") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc.__class__.__name__}", file=f, field="--roles") from None
    out: list[tuple[str, str]] = []
    allowed = "lines 'PATTERN ROLE', e.g. 'leaf-* leaf' (shell glob on the switch name)"
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not s:
            continue
        cols = s.split()
        if len(cols) != 2 or not _ROLE.match(cols[1]) or len(cols[0]) > 200:
            raise InputError("bad roles line", file=f, field=f"line {lineno}", value=s[:60], allowed=allowed)
        out.append((cols[0], cols[1]))
    if not out:
        raise InputError("no roles in the file", file=f, allowed=allowed)
    return out


def assign_roles(names_types: dict[str, str], rules: list[tuple[str, str]] | None = None) -> dict[str, str]:
    """name → role, from ``rules`` (``--roles``), the DEVICE_METADATA type, or the hostname pattern.

    ``names_types`` maps each device name to its DEVICE_METADATA type ("" when absent)."""
    out: dict[str, str] = {}
    for name, typ in names_types.items():
        role = None
        for pat, r in rules or []:
            if fnmatch.fnmatchcase(name, pat):
                role = r
                break
        out[name] = role or typ or hostname_pattern(name)
    return out


def role_source(name: str, typ: str, rules: list[tuple[str, str]] | None) -> str:
    """Where the role of ``name`` came from: ``--roles``, ``DEVICE_METADATA.type`` or ``hostname``."""
    if any(fnmatch.fnmatchcase(name, p) for p, _ in rules or []):
        return "--roles"
    return "DEVICE_METADATA.type" if typ else "hostname"

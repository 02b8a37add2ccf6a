"""A measurement cache on disk, so the same packet-level measurement is never simulated twice — in
one run or across runs (issue 19: the main job's second run).

An entry is keyed by a SHA-256 of the measurement's inputs (their ``repr``: frozen dataclasses and
tuples), the package version and a hash of the source files of everything that computes it (the
packet engine, the flow model, the topology, the scenario model and the main job's stages), so any
code change makes old entries unreachable. Entries are pickles written atomically (temp + rename).

Where: ``$AIFABRIC_CACHE_DIR``, else ``$XDG_CACHE_HOME/aifabric``, else ``~/.cache/aifabric``.
``AIFABRIC_CACHE=off`` disables it (every measurement is simulated). A cache that cannot be read or
written is ignored, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
SOURCE_PACKAGES = ("sim", "flow", "topology", "stages", "workload")
SOURCE_MODULES = ("scenario.py", "units.py", "_version.py")


def cache_dir() -> Path:
    if os.environ.get("AIFABRIC_CACHE_DIR"):
        return Path(os.environ["AIFABRIC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aifabric"


def enabled() -> bool:
    return os.environ.get("AIFABRIC_CACHE", "on").lower() not in ("off", "0", "no", "false")


@lru_cache(maxsize=1)
def code_hash() -> str:
    """SHA-256 over the source files that compute a measurement (sorted, path + bytes)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    files = [root / m for m in SOURCE_MODULES]
    for pkg in SOURCE_PACKAGES:
        files += sorted((root / pkg).rglob("*.py"))
    for f in sorted(files):
        if f.is_file():
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def key_of(kind: str, inputs) -> str:
    from aifabric._version import __version__

    return hashlib.sha256(f"{kind}|{__version__}|{code_hash()}|{inputs!r}".encode()).hexdigest()


_MISS = object()


def _path(kind: str, inputs) -> Path:
    return cache_dir() / kind / f"{key_of(kind, inputs)}.pkl"


def load(kind: str, inputs, default=None):
    """The stored value for ``inputs``, or ``default`` (cache off, absent or unreadable)."""
    if not enabled():
        return default
    try:
        with _path(kind, inputs).open("rb") as fh:
            return pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return default


def store(kind: str, inputs, value) -> None:
    """Store ``value`` for ``inputs`` (atomically; a cache that cannot be written is ignored)."""
    if not enabled():
        return
    path = _path(kind, inputs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as tmp:
            pickle.dump(value, tmp, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp.name, path)
    except OSError:
        pass


def disk_cached(kind: str, inputs, compute: Callable[[], T]) -> T:
    """``compute()``'s result for ``inputs``, from the disk cache when present; stored when not."""
    value = load(kind, inputs, _MISS)
    if value is not _MISS:
        return value
    value = compute()
    store(kind, inputs, value)
    return value


class Memo(OrderedDict):
    """An in-process memo that keeps the ``maxsize`` most recently used entries, so a long-lived
    process (a sweep, a notebook, the test suite) does not grow with every distinct input (the disk
    cache above keeps the rest across runs). ``get`` and storing mark an entry as used."""

    def __init__(self, maxsize: int):
        super().__init__()
        if maxsize < 1:
            raise ValueError(f"Memo maxsize must be >= 1, got {maxsize}")
        self.maxsize = maxsize

    def get(self, key, default=None):
        if key not in self:
            return default
        self.move_to_end(key)
        return super().__getitem__(key)

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)


__all__ = ["Memo", "cache_dir", "code_hash", "disk_cached", "enabled", "key_of", "load", "store"]

"""Ahead-of-time compiled kernels (issue 19: start-up and memory of small runs).

A process that runs a kernel through numba's JIT pays, before the first event, for importing numba
(~0.25 s, ~55 MiB) and for initialising its target context when the cached machine code is
loaded (~0.2 s, ~45 MiB) — most of a small scenario's run and of its peak memory. The same kernel
compiled ahead of time by ``numba.pycc`` (deprecated in numba, still shipped in 0.68) is a plain C
extension that needs neither: ``python -m aifabric.sim.aot`` builds one per kernel, and the
engines load it instead of the JIT dispatcher when it was built from the very source files in use
(a key over their bytes, the Python, numpy and numba versions and the machine); otherwise — never
built, sources edited since, ``AIFABRIC_AOT=0`` — they use the JIT kernel as before. Both are the
same compiled function, so results are identical (tests/test_startup_aot.py).

This module is the numba-free half (find, check, load); building lives in :mod:`aifabric.sim.aot`.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
from pathlib import Path

ENV = "AIFABRIC_AOT"  # "0": always the JIT kernels
DIR_ENV = "AIFABRIC_AOT_DIR"  # where built kernels live (default: the sources' __pycache__)


def _numba_version() -> bytes:
    """numba's version file, found without importing numba (b"" when numba is absent)."""
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.submodule_search_locations:
        return b""
    f = Path(next(iter(spec.submodule_search_locations))) / "_version.py"
    return f.read_bytes() if f.exists() else b""


def key(sources: list[Path]) -> str:
    """16 hex digits naming a build of ``sources`` for this Python, numpy, numba and machine."""
    import numpy as np

    h = hashlib.sha256()
    for p in sources:
        h.update(Path(p).read_bytes())
    for part in (sys.version, np.__version__, platform.machine(), sys.platform):
        h.update(part.encode())
    h.update(_numba_version())
    return h.hexdigest()[:16]


def directory(sources: list[Path]) -> Path:
    d = os.environ.get(DIR_ENV, "").strip()
    return Path(d) if d else Path(sources[0]).parent / "__pycache__"


def module_name(stem: str, sources: list[Path]) -> str:
    return f"_aot_{stem}_{key(sources)}"


def artifact(stem: str, sources: list[Path]) -> Path:
    """Path of the extension module a build of ``sources`` writes (it may not exist)."""
    name = module_name(stem, sources)
    return directory(sources) / (name + importlib.machinery.EXTENSION_SUFFIXES[0])


def load(stem: str, sources: list[Path]):
    """The built extension module of ``sources``, or None (not built for these sources,
    ``AIFABRIC_AOT=0``, or ``NUMBA_DISABLE_JIT`` set: then the kernels run as plain Python)."""
    if os.environ.get(ENV, "").strip() == "0":
        return None
    if os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0"):
        return None  # the kernels as plain Python were asked for (the tests compare them)
    path = artifact(stem, sources)
    if not path.exists():
        return None
    name = path.name.split(".")[0]
    if name in sys.modules:
        return sys.modules[name]
    try:
        loader = importlib.machinery.ExtensionFileLoader(name, str(path))
        spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
    except (ImportError, OSError):  # a damaged or foreign file: the JIT kernel, as without a build
        return None
    sys.modules[name] = mod
    return mod


__all__ = ["DIR_ENV", "ENV", "artifact", "key", "load", "module_name"]

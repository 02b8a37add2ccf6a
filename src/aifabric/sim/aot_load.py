"""The packet kernel's loader, the numba-free half of :mod:`aifabric.sim.aot`: :func:`kernel` is
what the engine calls — the ahead-of-time build's namespace when one of these very sources exists
(:mod:`aifabric.flow._aot`), else :mod:`aifabric.sim.kernel` (numba's JIT). Building lives in
:mod:`aifabric.sim.aot` (``python -m aifabric.sim.aot``), which needs the engine's tables.
"""

from __future__ import annotations

import functools
import pickle
import types
from pathlib import Path

from aifabric.flow import _aot

SOURCES = [Path(__file__).with_name(n) for n in ("kernel.py", "uet.py", "uet_lb.py", "uet_rccc.py")]


def _constants_path() -> Path:
    return _aot.artifact("kernel", SOURCES).with_suffix(".constants.pickle")


@functools.cache
def kernel():
    """The kernel the engine runs: the ahead-of-time build's namespace, or :mod:`kernel`."""
    mod = _aot.load("kernel", SOURCES)
    if mod is not None:
        try:
            constants = pickle.loads(_constants_path().read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError):
            constants = None
        if constants is not None:
            return types.SimpleNamespace(**constants, run=run_or_jit(mod.run, _jit_run), AOT=True)
    from aifabric.sim import kernel as K

    _drop_stale_cache(K.run)
    return K


def _drop_stale_cache(dispatcher) -> None:
    """numba checks a cached function against its own file only, while the kernel's sources
    (:data:`SOURCES`) read each other's constants: ``kernel.run`` or a UET handler compiled before
    the last edit of another of these files would be reused with stale constants (a crash, not an
    error). Every cache index of these modules older than the newest source is removed, so numba
    compiles afresh (a no-op when the cache is current)."""
    try:
        from numba.core.caching import FunctionCache

        folder = Path(FunctionCache(dispatcher.py_func)._cache_path)
        newest = max(s.stat().st_mtime for s in SOURCES)
        stems = {s.stem for s in SOURCES}
        for index in folder.glob("*.nbi"):
            if index.name.split(".", 1)[0] in stems and index.stat().st_mtime < newest:
                index.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 - numba internals may change; then numba's own check stands
        return


def _jit_run():
    from aifabric.sim import kernel as K

    return K.run


def run_or_jit(aot_run, jit_run):
    """``aot_run``, or — when it refuses the arguments' types (the build has one signature, the
    engine's tables: C-contiguous int64/float64 arrays; the kernel itself raises nothing) — the
    same function through numba's JIT, ``jit_run()``."""

    def run(*args):
        try:
            return aot_run(*args)
        except TypeError:
            return jit_run()(*args)

    return run


def uses_aot() -> bool:
    return getattr(kernel(), "AOT", False) is True

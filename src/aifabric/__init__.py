"""aifabric — InfiniBand or RoCEv2? Design, price, simulate and audit GPU-cluster fabrics.

Python API (see :mod:`aifabric.api`, :mod:`aifabric.notebook` and docs/front.md):
``aifabric.compare(...)``, ``plan``, ``train``, ``collective``, ``calibrate``, ``simulate(scenario)``. Packages and their layers (imports point
downward only, enforced by import-linter): ``cli``, ``api`` → ``report`` → ``stages`` (the main
job: design → workload → measure → performance → risk → decide, chained by ``stages.pipeline``)
→ ``design``, ``audit`` → ``workload`` → ``sim`` → ``flow`` → ``topology`` → ``scenario`` →
``hardware`` → ``units``, ``errors``. See docs/architecture.md.
"""

from aifabric._version import __version__

__all__ = ["__version__", "calibrate", "collective", "compare", "plan", "simulate", "train"]
_WHERE = {
    "simulate": "aifabric.sim",
    "compare": "aifabric.api",
    "plan": "aifabric.api",
    "train": "aifabric.notebook",
    "collective": "aifabric.notebook",
    "calibrate": "aifabric.notebook",
}


def __getattr__(name: str):
    """The API's functions, imported on first use (no numba at package import)."""
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'aifabric' has no attribute {name!r}")


def __dir__() -> list[str]:
    """``dir(aifabric)`` and notebook completion list the API's functions before their first use."""
    return sorted({*globals(), *__all__})

"""aifabric — InfiniBand or RoCEv2? Design, price, simulate and audit GPU-cluster fabrics.

Python API (see :mod:`aifabric.api` and the README): ``aifabric.compare(...)``,
``aifabric.plan(...)``, ``aifabric.simulate(scenario)``. Packages and their layers (imports point
downward only, enforced by import-linter): ``cli``, ``api`` → ``report`` → ``stages`` (the main
job: design → workload → measure → performance → risk → decide, chained by ``stages.pipeline``)
→ ``design``, ``audit`` → ``workload`` → ``sim`` → ``flow`` → ``topology`` → ``scenario`` →
``hardware`` → ``units``, ``errors``. See docs/architecture.md.
"""

from aifabric._version import __version__

__all__ = ["__version__", "compare", "plan", "simulate"]


def __getattr__(name: str):
    """``aifabric.simulate`` / ``compare`` / ``plan`` without importing numba at package import."""
    if name == "simulate":
        from aifabric.sim import simulate

        return simulate
    if name in ("compare", "plan"):
        import aifabric.api as api

        return getattr(api, name)
    raise AttributeError(f"module 'aifabric' has no attribute {name!r}")

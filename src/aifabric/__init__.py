"""aifabric — InfiniBand or RoCEv2? Design, price, simulate and audit GPU-cluster fabrics.

Layers (imports point downward only): units, catalog → scenario → topology, routing → sim, flow →
workload → cost → advise → audit → results → report, cli.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "simulate"]


def __getattr__(name: str):
    """``aifabric.simulate(scenario) -> Results`` without importing numba at package import."""
    if name == "simulate":
        from aifabric.sim import simulate

        return simulate
    raise AttributeError(f"module 'aifabric' has no attribute {name!r}")

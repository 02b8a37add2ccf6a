"""The fast flow-level model on the same :class:`~aifabric.topology.Topology` and routing rules
as the packet engine.

* :mod:`aifabric.flow.hashing` — vectorised ECMP hash (bit-identical to the packet engine's).
* :mod:`aifabric.flow.draws` — seeded draws both engines share (the uniform derangement).
* :mod:`aifabric.flow.paths` — :class:`PathModel`: per-flow ECMP / adaptive / static (IB LFT)
  paths from switch-to-leaf distances, and even-split link loads for huge flow counts.
* :mod:`aifabric.flow.symmetric` — symmetry-reduced link loads of an all-pairs step (a numba
  kernel; one plane standing for identical planes): the 100,000-GPU rail-local all-to-all.
* :mod:`aifabric.flow.scale` — memory estimate of a flow-mode collective on a rail design.
* :mod:`aifabric.flow.maxmin` — max-min fair rates by progressive filling.
* :mod:`aifabric.flow.engine` — :func:`simulate_flows`: fluid flows, rates recomputed at every
  arrival and completion, plus fixed latency terms.
* :mod:`aifabric.flow.scenario` — :func:`simulate_flow_scenario`: a scenario → the
  ``simulate --json`` dict.
"""

# Lazy attributes: the packet engine imports aifabric.flow.paths only; importing the package
# must not pull in pandas and the flow kernels on that path (start-up time counts in benchmarks).
_LAZY = {
    "FLOW_COLUMNS": "engine",
    "simulate_flows": "engine",
    "summary_of": "engine",
    "jain_index": "maxmin",
    "max_min_rates": "maxmin",
    "ROUTINGS": "paths",
    "PathModel": "paths",
    "simulate_flow_scenario": "scenario",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"aifabric.flow.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'aifabric.flow' has no attribute {name!r}")


__all__ = [
    "FLOW_COLUMNS",
    "ROUTINGS",
    "PathModel",
    "jain_index",
    "max_min_rates",
    "simulate_flow_scenario",
    "simulate_flows",
    "summary_of",
]

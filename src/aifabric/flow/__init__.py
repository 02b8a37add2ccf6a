"""The fast flow-level model on the same :class:`~aifabric.topology.Topology` and routing rules
as the packet engine.

* :mod:`aifabric.flow.hashing` — vectorised ECMP hash (bit-identical to the packet engine's).
* :mod:`aifabric.flow.paths` — :class:`PathModel`: per-flow ECMP / adaptive / static (IB LFT)
  paths from switch-to-leaf distances, and even-split link loads for huge flow counts.
* :mod:`aifabric.flow.maxmin` — max-min fair rates by progressive filling.
* :mod:`aifabric.flow.engine` — :func:`simulate_flows`: fluid flows, rates recomputed at every
  arrival and completion, plus fixed latency terms.
* :mod:`aifabric.flow.scenario` — :func:`simulate_flow_scenario`: a scenario → the
  ``simulate --json`` dict.
"""

from aifabric.flow.engine import FLOW_COLUMNS, simulate_flows, summary_of
from aifabric.flow.maxmin import jain_index, max_min_rates
from aifabric.flow.paths import ROUTINGS, PathModel
from aifabric.flow.scenario import simulate_flow_scenario

__all__ = ["FLOW_COLUMNS", "ROUTINGS", "PathModel", "jain_index", "max_min_rates", "simulate_flow_scenario",
           "simulate_flows", "summary_of"]

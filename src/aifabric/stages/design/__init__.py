"""Stage 1, *design*: the buyer's fabric options (:mod:`.options`), each planned and priced
(:mod:`.fabrics`: topology size, bill of materials, capex, power, path latency) →
:class:`DesignEvidence`."""

from aifabric.stages.design.fabrics import (
    MIRROR_SUFFIX,
    ROUTING,
    SWITCH_HOP_NS,
    DesignEvidence,
    DesignInput,
    default_options,
    design,
    is_adaptive,
    nic_rate_for,
    roce_key,
)
from aifabric.stages.design.options import options_for

__all__ = [
    "MIRROR_SUFFIX",
    "ROUTING",
    "SWITCH_HOP_NS",
    "DesignEvidence",
    "DesignInput",
    "default_options",
    "design",
    "is_adaptive",
    "nic_rate_for",
    "options_for",
    "roce_key",
]

"""Stage 5, *risk*: what each fabric loses to faults, mistakes and shared traffic → :class:`RiskEvidence`.

:mod:`.assess` runs the stage: every scenario of the failure and misconfiguration library
(:mod:`.library`) measured on a packet-level pod derived from each planned fabric (:mod:`.testbed`,
its traffic :mod:`.traffic`, its step-time tail :mod:`.tail`, the shipped scenario files
:mod:`.scenario_files`), sent through *performance* again and weighed by sourced rates
(:mod:`.rates`, :mod:`.redundancy`, :mod:`.interruptions`); :mod:`.item` is one weighed item."""

from aifabric.stages.risk.assess import (
    MISCONFIG_PROBABILITY,
    MISCONFIG_PROBABILITY_BASIS,
    RATES,
    RiskEvidence,
    assess,
    combine,
    interruption_events,
    lost_share,
)
from aifabric.stages.risk.testbed import BASELINES, LIBRARY, Testbed, measure_testbed

__all__ = [
    "BASELINES",
    "LIBRARY",
    "MISCONFIG_PROBABILITY",
    "MISCONFIG_PROBABILITY_BASIS",
    "RATES",
    "RiskEvidence",
    "Testbed",
    "assess",
    "combine",
    "interruption_events",
    "lost_share",
    "measure_testbed",
]
